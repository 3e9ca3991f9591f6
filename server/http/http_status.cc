#include "server/http/http_status.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace deniable::server::http {

int HttpStatusFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kCancelled:
      return 499;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:  // UNKNOWN, INTERNAL, DATA_LOSS
      return 500;
  }
}

std::string ClipText(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  // Back off continuation bytes (10xxxxxx) so no character is split.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat(text.substr(0, cut), "... (", text.size(), " bytes)");
}

std::string ErrorBody(const absl::Status& status, int http_status) {
  // Built as a google.protobuf.Struct so that protobuf's JSON printer does the escaping.
  google::protobuf::Struct body;
  google::protobuf::Struct* error = (*body.mutable_fields())["error"].mutable_struct_value();
  auto& fields = *error->mutable_fields();
  fields["code"].set_number_value(http_status != 0 ? http_status : HttpStatusFor(status.code()));
  fields["status"].set_string_value(absl::StatusCodeToString(status.code()));
  fields["message"].set_string_value(ClipText(status.message(), kMaxErrorMessageBytes));
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(body, &json);
  return json;
}

}  // namespace deniable::server::http
