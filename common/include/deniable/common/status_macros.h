// Status propagation macros (Debian's Abseil 20220623 has none).
//
//   absl::StatusOr<Design> MakeDesign();
//   absl::Status Use() {
//     DENIABLE_ASSIGN_OR_RETURN(Design d, MakeDesign());
//     DENIABLE_RETURN_IF_ERROR(Validate(d));
//     return absl::OkStatus();
//   }
#ifndef DENIABLE_COMMON_STATUS_MACROS_H_
#define DENIABLE_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns from the enclosing function if `expr` (an absl::Status) is not OK.
#define DENIABLE_RETURN_IF_ERROR(expr)                   \
  do {                                                   \
    ::absl::Status deniable_status_ = (expr);            \
    if (!deniable_status_.ok()) return deniable_status_; \
  } while (0)

#define DENIABLE_STATUS_CONCAT_INNER_(a, b) a##b
#define DENIABLE_STATUS_CONCAT_(a, b) DENIABLE_STATUS_CONCAT_INNER_(a, b)

// Evaluates `rexpr` (an absl::StatusOr<T>); on error returns its status, else moves the value
// into `lhs` (a declaration such as `Design d` or an existing variable).
#define DENIABLE_ASSIGN_OR_RETURN(lhs, rexpr) \
  DENIABLE_ASSIGN_OR_RETURN_IMPL_(DENIABLE_STATUS_CONCAT_(deniable_statusor_, __LINE__), lhs, rexpr)

#define DENIABLE_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                    \
  if (!statusor.ok()) return statusor.status();               \
  lhs = std::move(statusor).value()

#endif  // DENIABLE_COMMON_STATUS_MACROS_H_
