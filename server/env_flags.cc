#include "server/env_flags.h"

#include <cstdlib>

#include "absl/flags/reflection.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace deniable::server {

std::string EnvironmentVariableFor(absl::string_view name) {
  return absl::StrCat("DENIABLE_", absl::AsciiStrToUpper(name));
}

absl::Status ApplyEnvironmentToFlags(absl::string_view path_part) {
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (!absl::StrContains(flag->Filename(), path_part)) continue;
    const std::string variable = EnvironmentVariableFor(name);
    const char* value = std::getenv(variable.c_str());
    if (value == nullptr || *value == '\0') continue;
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(absl::StrCat(variable, " (for --", name, "): ", error));
    }
  }
  return absl::OkStatus();
}

}  // namespace deniable::server
