#include "tools/cli/cli_kinds.h"

#include <utility>

namespace deniable::tools {
namespace {

std::vector<CliKind>& Kinds() {
  static auto* kinds = new std::vector<CliKind>();
  return *kinds;
}

}  // namespace

void RegisterCliKind(CliKind kind) { Kinds().push_back(std::move(kind)); }

const std::vector<CliKind>& CliKinds() { return Kinds(); }

}  // namespace deniable::tools
