#include "server/access_log.h"

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace deniable::server {

void LogAccess(const AccessEntry& entry) {
  std::string line = absl::StrCat("event=access transport=", entry.transport,
                                  " method=", entry.method, " code=", entry.code);
  if (entry.http_status != 0) absl::StrAppend(&line, " http_status=", entry.http_status);
  absl::StrAppend(&line,
                  absl::StrFormat(" latency_ms=%.3f", absl::ToDoubleMilliseconds(entry.latency)));
  if (entry.reports >= 0) absl::StrAppend(&line, " reports=", entry.reports);
  if (entry.import) absl::StrAppend(&line, " import=true");
  std::shared_ptr<spdlog::logger> access = spdlog::get(kAccessLoggerName);
  if (access == nullptr) access = spdlog::default_logger();
  access->info("{}", line);
}

}  // namespace deniable::server
