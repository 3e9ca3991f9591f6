#include "deniable/common/wire_report.h"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace deniable {
namespace {

// A report carries only its mechanism's fields: a k-RR report with a hash or bits (or an OUE
// report with a category) was made for another design, and reading only the mechanism's own
// fields would count it (as category 0, say).
absl::Status RejectForeignFields(const CategoricalDesign& design, const WireCategorical& report,
                                 absl::string_view field) {
  const CategoricalMechanism mechanism = design.mechanism();
  const absl::string_view name = CategoricalMechanismName(mechanism);
  auto foreign = [&](absl::string_view member) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".", member, ": must be unset in a ",
                                                   name,
                                                   " report (it belongs to another "
                                                   "mechanism's report)"));
  };
  if (mechanism != CategoricalMechanism::kDirectEncoding && report.category != 0) {
    return foreign("category");
  }
  if (mechanism != CategoricalMechanism::kOptimizedUnaryEncoding && !report.bits.empty()) {
    return foreign("bits");
  }
  if (mechanism != CategoricalMechanism::kOptimizedLocalHashing) {
    if (report.hash_a != 0) return foreign("hash_a");
    if (report.hash_b != 0) return foreign("hash_b");
    if (report.bucket != 0) return foreign("bucket");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CategoricalReport> CategoricalReportFromWire(const CategoricalDesign& design,
                                                            const WireCategorical& report,
                                                            absl::string_view field) {
  CategoricalReport out;
  constexpr uint32_t kMaxInt = static_cast<uint32_t>(std::numeric_limits<int32_t>::max());
  if (absl::Status foreign = RejectForeignFields(design, report, field); !foreign.ok()) {
    return foreign;
  }
  switch (design.mechanism()) {
    case CategoricalMechanism::kDirectEncoding:
      if (report.category > kMaxInt) {
        return absl::InvalidArgumentError(absl::StrCat(field, ".category: must be in [0, ",
                                                       design.k(), "), but is ", report.category));
      }
      out.category = static_cast<int32_t>(report.category);
      break;
    case CategoricalMechanism::kOptimizedUnaryEncoding: {
      const size_t k = static_cast<size_t>(design.k());
      const size_t want = (k + 7) / 8;
      const std::string& bytes = report.bits;
      if (bytes.size() != want) {
        return absl::InvalidArgumentError(absl::StrCat(field, ".bits: must be exactly ", want,
                                                       " bytes for k = ", k, " categories, but is ",
                                                       bytes.size(), " bytes"));
      }
      out.bits.resize(k);
      for (size_t v = 0; v < want * 8; ++v) {
        const int bit = (static_cast<uint8_t>(bytes[v / 8]) >> (v % 8)) & 1;
        if (v < k) {
          out.bits[v] = static_cast<uint8_t>(bit);
        } else if (bit != 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(field, ".bits: bit ", v, " is set, but only the first ", k,
                           " bits may be (the unused high bits of the last byte must be 0)"));
        }
      }
      break;
    }
    case CategoricalMechanism::kOptimizedLocalHashing:
      if (report.bucket > kMaxInt) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ".bucket: must be in [0, ", design.hash_buckets(), "), but is ", report.bucket));
      }
      out.hash_a = report.hash_a;
      out.hash_b = report.hash_b;
      out.bucket = static_cast<int32_t>(report.bucket);
      break;
  }
  return out;
}

WireCategorical CategoricalReportToWire(const CategoricalDesign& design,
                                        const CategoricalReport& report) {
  WireCategorical out;
  switch (design.mechanism()) {
    case CategoricalMechanism::kDirectEncoding:
      out.category = static_cast<uint32_t>(report.category);
      break;
    case CategoricalMechanism::kOptimizedUnaryEncoding: {
      std::string bytes((report.bits.size() + 7) / 8, '\0');
      for (size_t v = 0; v < report.bits.size(); ++v) {
        if (report.bits[v] != 0) {
          bytes[v / 8] = static_cast<char>(static_cast<uint8_t>(bytes[v / 8]) | (1u << (v % 8)));
        }
      }
      out.bits = std::move(bytes);
      break;
    }
    case CategoricalMechanism::kOptimizedLocalHashing:
      out.hash_a = report.hash_a;
      out.hash_b = report.hash_b;
      out.bucket = static_cast<uint32_t>(report.bucket);
      break;
  }
  return out;
}

}  // namespace deniable
