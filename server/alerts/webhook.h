// The alert webhook: POSTs a JSON body to a URL with libcurl (Debian's libcurl4-openssl-dev).
//
// Thread-safe (one curl handle per call; curl_global_init once per process).
#ifndef DENIABLE_SERVER_ALERTS_WEBHOOK_H_
#define DENIABLE_SERVER_ALERTS_WEBHOOK_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace deniable::server {

// POSTs `json` to `url` (http:// or https://) with Content-Type: application/json, waiting at
// most `timeout`.
// Errors: INVALID_ARGUMENT naming "url" (not http:// or https://); UNAVAILABLE with curl's
// message when the request fails or the receiver answers a status outside 2xx.
absl::Status PostJson(const std::string& url, const std::string& json, absl::Duration timeout);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_ALERTS_WEBHOOK_H_
