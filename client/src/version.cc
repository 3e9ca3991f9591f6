#include "deniable/client/version.h"

namespace deniable::client {

const char* Version() { return DENIABLE_VERSION; }

const char* BuildInfo() { return DENIABLE_BUILD_INFO; }

}  // namespace deniable::client
