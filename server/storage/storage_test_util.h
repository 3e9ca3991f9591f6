// Helpers shared by the storage tests: a fresh database path, a metric, a report row.
#ifndef DENIABLE_SERVER_STORAGE_STORAGE_TEST_UTIL_H_
#define DENIABLE_SERVER_STORAGE_STORAGE_TEST_UTIL_H_

#include <unistd.h>

#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/storage/storage.h"

namespace deniable::server::testing_util {

// A database path under the test's temporary directory, unique per process and call, with no
// database, WAL or shared-memory file left from an earlier run.
inline std::string TempDbPath(const std::string& name) {
  static int counter = 0;
  const std::string path = absl::StrCat(::testing::TempDir(), "/storage_test_", name, "_",
                                        ::getpid(), "_", counter++, ".db");
  for (const char* suffix : {"", "-wal", "-shm", "-reports", "-reports-wal", "-reports-shm"}) {
    std::remove((path + suffix).c_str());
  }
  return path;
}

// A metric with one design version (a = 0.75, b = 0.25).
inline StoredMetric NewMetric(const std::string& name) {
  StoredMetric m;
  m.name = name;
  m.description = "question";
  m.created_time_seconds = 1000;
  m.time_precision_seconds = 3600;
  m.designs.push_back(StoredDesign{1, "params", 0.75, 0.25, 1000});
  return m;
}

// A report of design version 1 at `hour` * 3600 seconds whose id is derived from `id` (0-65535).
inline ReportRow Row(int64_t metric_id, int id, bool bit, int64_t hour, std::string labels = "") {
  ReportRow r;
  r.metric_id = metric_id;
  r.design_version = 1;
  if (bit) r.counters = {0};  // a yes/no report's bit is counter 0
  r.report_id.fill(0);
  r.report_id[0] = static_cast<uint8_t>(id);
  r.report_id[15] = static_cast<uint8_t>(id >> 8);
  r.event_time_seconds = hour * 3600;
  r.labels = std::move(labels);
  return r;
}

// A categorical metric with categories a, b, c, d (one design version; p* = 0.6, q* = 0.2).
inline StoredMetric NewCategoricalMetric(const std::string& name) {
  StoredMetric m = NewMetric(name);
  m.categories = {"a", "b", "c", "d"};
  m.designs[0].a = 0.6;
  m.designs[0].b = 0.2;
  return m;
}

// A categorical report supporting `supported` (category indices), otherwise as Row.
inline ReportRow CategoricalRow(int64_t metric_id, int id, std::vector<uint32_t> supported,
                                int64_t hour, std::string labels = "") {
  ReportRow r = Row(metric_id, id, false, hour, std::move(labels));
  r.counters.assign(supported.begin(), supported.end());  // category v is counter v
  return r;
}

// A yes/no count row's yes count (counter 0) and a categorical one's support (the counters).
inline int64_t Yes(const CountRow& row) { return CounterAt(row.counters, 0); }
inline int64_t Yes(const CountRow::Firsts& f) { return CounterAt(f.counters, 0); }

// A 16-byte report id from a seeded generator: the same ids every run.
inline ReportId RandomReportId(std::mt19937_64& gen) {
  ReportId id{};
  for (int b = 0; b < 2; ++b) {
    const uint64_t word = gen();
    for (int k = 0; k < 8; ++k) id[8 * b + k] = static_cast<uint8_t>(word >> (8 * k));
  }
  return id;
}

}  // namespace deniable::server::testing_util

#endif  // DENIABLE_SERVER_STORAGE_STORAGE_TEST_UTIL_H_
