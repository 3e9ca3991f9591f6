#include "server/metrics/metered_storage.h"

#include <chrono>
#include <utility>

namespace deniable::server {
namespace {

prometheus::Histogram& NewHistogram(prometheus::Registry& registry, const char* name,
                                    const char* help, prometheus::Histogram::BucketBoundaries b) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(registry).Add({},
                                                                                   std::move(b));
}

}  // namespace

MeteredStorage::MeteredStorage(std::unique_ptr<Storage> target, prometheus::Registry& registry)
    : target_(std::move(target)),
      rows_(NewHistogram(registry, "deniable_commit_reports",
                         "Reports (rows) per committed append transaction",
                         {1, 10, 100, 1000, 10000, 65536, 262144})),
      batches_(NewHistogram(registry, "deniable_commit_batches",
                            "Report batches (calls) sharing one append transaction",
                            {1, 2, 4, 8, 16, 32, 64, 128, 256})),
      seconds_(
          NewHistogram(registry, "deniable_commit_seconds",
                       "Wall time of one append transaction, commit and fsync included",
                       {0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5})),
      failures_(prometheus::BuildCounter()
                    .Name("deniable_commit_failures_total")
                    .Help("Append transactions that returned an error (nothing written)")
                    .Register(registry)
                    .Add({})) {}

void MeteredStorage::Observe(int64_t rows, int64_t batches, double seconds, bool ok) {
  if (!ok) {
    failures_.Increment();
    return;
  }
  rows_.Observe(static_cast<double>(rows));
  batches_.Observe(static_cast<double>(batches));
  seconds_.Observe(seconds);
}

absl::StatusOr<AppendResult> MeteredStorage::AppendReports(absl::Span<const ReportRow> rows) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<AppendResult> result = target_->AppendReports(rows);
  Observe(static_cast<int64_t>(rows.size()), 1,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
          result.ok());
  return result;
}

absl::StatusOr<std::vector<AppendResult>> MeteredStorage::AppendBatches(
    absl::Span<const absl::Span<const ReportRow>> batches) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<AppendResult>> result = target_->AppendBatches(batches);
  // UNIMPLEMENTED is the target saying "append them one by one", not a failed transaction.
  if (result.status().code() == absl::StatusCode::kUnimplemented) return result;
  int64_t rows = 0;
  for (const auto& b : batches) rows += static_cast<int64_t>(b.size());
  Observe(rows, static_cast<int64_t>(batches.size()),
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
          result.ok());
  return result;
}

}  // namespace deniable::server
