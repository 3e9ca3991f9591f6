// The ledger arithmetic shared by the device stores (private to the SDK).
#ifndef DENIABLE_CLIENT_SRC_LEDGER_UPDATE_H_
#define DENIABLE_CLIENT_SRC_LEDGER_UPDATE_H_

#include "deniable/client/device_store.h"

namespace deniable::client {

// Applies one committed report to its metric's ledger.
inline void ApplyCommitToLedger(const ReportCommit& commit, MetricLedger* ledger) {
  ++ledger->reports_accepted;
  ledger->epsilon_if_fresh += commit.epsilon;
  if (commit.randomized) {
    ++ledger->randomizations;
    ledger->epsilon_spent += commit.epsilon;
  }
  ledger->last_report_seconds = commit.report_time_seconds;
  if (commit.value_clipped) ++ledger->values_clipped;
  if (ledger->period_start_seconds == commit.period_start_seconds) {
    ++ledger->reports_this_period;
  } else {
    ledger->period_start_seconds = commit.period_start_seconds;
    ledger->reports_this_period = 1;
  }
}

inline void AddCounters(const DeliveryCounters& add, DeliveryCounters* to) {
  to->acknowledged += add.acknowledged;
  to->duplicates += add.duplicates;
  to->dropped_rejected += add.dropped_rejected;
  to->dropped_queue_full += add.dropped_queue_full;
  to->dropped_too_old += add.dropped_too_old;
  to->dropped_design_mismatch += add.dropped_design_mismatch;
}

}  // namespace deniable::client

#endif  // DENIABLE_CLIENT_SRC_LEDGER_UPDATE_H_
