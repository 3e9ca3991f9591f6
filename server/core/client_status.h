// The one place where an absl::Status becomes what a client sees, over gRPC or HTTP.
#ifndef DENIABLE_SERVER_CORE_CLIENT_STATUS_H_
#define DENIABLE_SERVER_CORE_CLIENT_STATUS_H_

#include "absl/status/status.h"

namespace deniable::server {

// The status a client gets for `status`: ClientVisibleStatus (server/storage/storage_error.h), so
// a storage failure shows its summary only and an unexpected constraint failure is INTERNAL, never
// ALREADY_EXISTS. A storage failure is logged whole (event=storage_failure, with the database's
// text) when it is mapped. Thread-safe.
absl::Status ForClient(const absl::Status& status);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_CLIENT_STATUS_H_
