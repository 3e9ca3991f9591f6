// The design fingerprint: what ties a device's cached design to the collector's design.
//
// A report names its design only by version ("v1 of uses_drugs"). A device that cached v1 from
// another collector, or from a database the operator recreated, would send bits randomized with
// a channel the collector does not use for that version, and the estimate would be debiased with
// the wrong (a, b), silently. So GetDesignResponse carries a fingerprint of the exact design
// version on this collector, the device copies it onto every report, and the ingestor rejects a
// report whose fingerprint differs (FAILED_PRECONDITION, permanent; docs/sdk.md "Design
// fingerprint").
//
// The fingerprint is the first 8 bytes (big-endian) of SHA-256 over a length-prefixed encoding
// of: the tag "deniable.design_fingerprint.v1", the metric's storage id, name and creation time
// (its identity in this database: a recreated database gives new creation times), and the design
// version, its creation time and its stored parameters (serialized DesignParameters, which fix
// the channel (a, b)), and for a categorical metric its category names (count, then each). 0 is
// never a fingerprint (it means "none" on the wire; a hash of 0 maps
// to 1).
//
// Example:
//   uint64_t f = DesignFingerprint(stored_metric, stored_metric.designs[0]);
//
// Thread-safe (a pure function).
#ifndef DENIABLE_SERVER_CORE_DESIGN_FINGERPRINT_H_
#define DENIABLE_SERVER_CORE_DESIGN_FINGERPRINT_H_

#include <cstdint>
#include <string>

#include "server/storage/storage.h"

namespace deniable::server {

// The fingerprint of `design`, one design version of `metric`. Never 0. No errors.
uint64_t DesignFingerprint(const StoredMetric& metric, const StoredDesign& design);

// The fingerprint as 16 lowercase hex digits, for messages and logs.
std::string FingerprintHex(uint64_t fingerprint);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_DESIGN_FINGERPRINT_H_
