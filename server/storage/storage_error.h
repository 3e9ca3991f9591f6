// Storage failures, and the one place where a storage failure becomes what a client sees.
//
// A storage backend (SqliteError, PostgresError) reports a failure of the database as a status
// whose message is a short summary for clients followed by the database's own text for the
// operator, "storage: the disk is full, retry later (commit: database or disk is full (sqlite
// code 13))", and whose payload kStorageFailureUrl holds the summary alone. The server logs the
// whole message; clients (gRPC and HTTP, server/service/grpc_status.h) get ClientVisibleStatus:
// the summary, never the database's text, and never ALREADY_EXISTS for a constraint the code did
// not expect. docs/operations.md, "Status codes a client sees", has the table.
//
// Example:
//   return StorageFailure(absl::StatusCode::kUnavailable, "storage: the disk is full, retry later",
//                         sqlite3_errmsg(db));
//
// Thread-safe (pure functions).
#ifndef DENIABLE_SERVER_STORAGE_STORAGE_ERROR_H_
#define DENIABLE_SERVER_STORAGE_STORAGE_ERROR_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace deniable::server {

// The payload of a storage failure: its summary for clients.
inline constexpr char kStorageFailureUrl[] = "type.deniable.dev/storage-failure";

// The summary of a write that failed because the disk (or the file system's quota) is full.
inline constexpr char kDiskFullSummary[] = "storage: the disk is full, retry later";

// A failure of the database: `code`, message "<summary> (<detail>)", payload the summary.
// REQUIRES: `code` is not OK.
absl::Status StorageFailure(absl::StatusCode code, absl::string_view summary,
                            absl::string_view detail);

// True when `status` came from StorageFailure (and was not rewritten since).
bool IsStorageFailure(const absl::Status& status);

// True when `status` came from StorageFailure with the summary kDiskFullSummary.
bool IsDiskFull(const absl::Status& status);

// What a client sees for `status`. A status that is not a storage failure is returned as it is
// (validation errors, "metric \"m\" already exists", the storage's own clear messages such as a
// deleted database file). A storage failure becomes its summary, without the database's text or
// the payload, with the same code, except:
//   ALREADY_EXISTS (a uniqueness constraint of the database failed where no caller expected one,
//     e.g. inside a batch of reports: a broken invariant, not the client's doing)
//     -> INTERNAL "storage: a server fault stopped the write (a database constraint failed);
//        nothing of it was stored; the server log has the detail"
// INTERNAL stays INTERNAL: every SDK keeps the reports and retries with backoff, so they are
// counted once the operator fixes the fault; UNAVAILABLE (may pass) and DATA_LOSS stay as they are.
absl::Status ClientVisibleStatus(const absl::Status& status);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_STORAGE_ERROR_H_
