#include "deniable/convert/interval_method_convert.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace deniable {

absl::StatusOr<IntervalMethod> MethodFromProto(v1::IntervalMethod method) {
  switch (method) {
    case v1::INTERVAL_METHOD_UNSPECIFIED:
    case v1::WILSON:
      return IntervalMethod::kWilson;
    case v1::WALD:
      return IntervalMethod::kWald;
    case v1::AGRESTI_COULL:
      return IntervalMethod::kAgrestiCoull;
    case v1::JEFFREYS:
      return IntervalMethod::kJeffreys;
    case v1::CLOPPER_PEARSON:
      return IntervalMethod::kClopperPearson;
    default:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("method: unknown interval method ", static_cast<int>(method)));
}

v1::IntervalMethod MethodToProto(IntervalMethod method) {
  switch (method) {
    case IntervalMethod::kWald:
      return v1::WALD;
    case IntervalMethod::kWilson:
      return v1::WILSON;
    case IntervalMethod::kAgrestiCoull:
      return v1::AGRESTI_COULL;
    case IntervalMethod::kJeffreys:
      return v1::JEFFREYS;
    case IntervalMethod::kClopperPearson:
      return v1::CLOPPER_PEARSON;
  }
  return v1::WILSON;
}

}  // namespace deniable
