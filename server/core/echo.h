// Bounded echo of untrusted input: the shared implementation lives in common/ (the SDK checks
// labels with the same messages); see deniable/common/echo.h.
#ifndef DENIABLE_SERVER_CORE_ECHO_H_
#define DENIABLE_SERVER_CORE_ECHO_H_

#include "deniable/common/echo.h"

namespace deniable::server {

using ::deniable::EchoValue;
using ::deniable::kMaxEchoBytes;

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_ECHO_H_
