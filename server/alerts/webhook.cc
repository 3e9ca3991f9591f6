#include "server/alerts/webhook.h"

#include <curl/curl.h>

#include <mutex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace deniable::server {
namespace {

size_t Discard(char*, size_t size, size_t count, void*) { return size * count; }

}  // namespace

absl::Status PostJson(const std::string& url, const std::string& json, absl::Duration timeout) {
  if (!absl::StartsWith(url, "http://") && !absl::StartsWith(url, "https://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("url: must start with http:// or https://, but is \"", url, "\""));
  }
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::UnavailableError("webhook: curl_easy_init failed");
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, json.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(json.size()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(absl::ToInt64Milliseconds(timeout)));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Discard);
  const CURLcode code = curl_easy_perform(curl);
  long http_status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http_status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (code != CURLE_OK) {
    return absl::UnavailableError(absl::StrCat("webhook ", url, ": ", curl_easy_strerror(code)));
  }
  if (http_status < 200 || http_status >= 300) {
    return absl::UnavailableError(
        absl::StrCat("webhook ", url, ": the receiver answered HTTP ", http_status));
  }
  return absl::OkStatus();
}

}  // namespace deniable::server
