// The HTTP/JSON API's answers as JSON: protobuf's JSON mapping (lowerCamelCase names, enums by
// name, fields at their default value included, unset messages left out, NaN and infinities as
// "NaN" / "Infinity" / "-Infinity") with two departures, for clients that read the numbers:
//
// - int64 and uint64 fields are JSON numbers when they fit in a double exactly
//   (|v| <= 2^53 - 1, JavaScript's Number.MAX_SAFE_INTEGER), strings beyond, where proto3's
//   mapping makes every one a string. Counts are numbers in practice; a client that reads a
//   string for a 64-bit field takes it as the same value (protobuf's parsers accept both).
// - A value the server does not have is null, not its proto3 default: a suppressed Prevalence
//   (a bucket or group below min_reports) keeps metric, n, its time range, group value and
//   `suppressed`, every other scalar is null; a categorical Prevalence's yes/no fields
//   (yesCount, estimateUnbiased, ciLower, ...) and a categorical Difference's difference,
//   standardError, ciLower and ciUpper are null (the categories' figures are in `shares`).
//
// Example:
//   std::string body = PrintApiJson(prevalence);  // {"metric":"m","n":2532,...}
//
// Thread-safe (no state).
#ifndef DENIABLE_SERVER_HTTP_JSON_PRINT_H_
#define DENIABLE_SERVER_HTTP_JSON_PRINT_H_

#include <string>

#include "google/protobuf/message.h"

namespace deniable::server::http {

// `message` as one line of JSON in the form above.
std::string PrintApiJson(const google::protobuf::Message& message);

}  // namespace deniable::server::http

#endif  // DENIABLE_SERVER_HTTP_JSON_PRINT_H_
