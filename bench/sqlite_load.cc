#include "bench/sqlite_load.h"

#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "deniable/common/status_macros.h"
#include "server/storage/sqlite/sqlite_statement.h"

namespace deniable::bench {

absl::StatusOr<double> RawSqliteInsertRate(const std::string& path, int batch_rows,
                                           absl::Duration duration) {
  RemoveDatabase(path);
  sqlite3* db = nullptr;
  if (int rc = sqlite3_open(path.c_str(), &db); rc != SQLITE_OK) {
    sqlite3_close(db);
    return absl::InternalError(absl::StrCat("cannot open ", path));
  }
  auto body = [&]() -> absl::StatusOr<double> {
    DENIABLE_RETURN_IF_ERROR(server::SqliteExec(
        db,
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
        "CREATE TABLE raw(metric_id INTEGER, event_time INTEGER, report_id BLOB, version INTEGER,"
        " bit INTEGER, labelset_id INTEGER)"));
    DENIABLE_ASSIGN_OR_RETURN(
        server::SqliteStatement insert,
        server::SqliteStatement::Prepare(db, "INSERT INTO raw VALUES(1, ?, ?, 1, ?, 1)"));
    IdSource ids(0x1234);
    std::string id;
    int64_t rows = 0;
    const absl::Time start = absl::Now();
    const absl::Time deadline = start + duration;
    while (absl::Now() < deadline) {
      DENIABLE_RETURN_IF_ERROR(server::SqliteExec(db, "BEGIN"));
      for (int i = 0; i < batch_rows; ++i, ++rows) {
        ids.Next(&id);
        insert.BindInt64(1, 1'700'000'000 - 1'700'000'000 % 3600);
        insert.BindBlob(2, id.data(), static_cast<int>(id.size()));
        insert.BindInt64(3, rows % 3 == 0);
        DENIABLE_RETURN_IF_ERROR(insert.Run());
      }
      DENIABLE_RETURN_IF_ERROR(server::SqliteExec(db, "COMMIT"));
    }
    return rows / absl::ToDoubleSeconds(absl::Now() - start);
  };
  absl::StatusOr<double> rate = body();
  sqlite3_close(db);
  RemoveDatabase(path);
  return rate;
}

absl::StatusOr<std::vector<LoadSlice>> BulkLoad(server::SqliteStorage* storage, int64_t metric_id,
                                                int64_t total, int hours, int64_t end_hour_seconds,
                                                int batch_rows, IdSource* ids) {
  std::vector<LoadSlice> slices;
  const int64_t slice_rows = std::max<int64_t>(1, total / 10);
  LoadSlice slice;
  absl::Time slice_start = absl::Now();
  int64_t stored = 0;
  std::vector<server::ReportRow> batch;
  std::string id;
  for (int h = 0; h < hours && stored < total; ++h) {
    const int64_t hour_rows = total / hours + (h < total % hours ? 1 : 0);
    const int64_t event_time = end_hour_seconds - static_cast<int64_t>(hours - h) * 3600;
    for (int64_t done = 0; done < hour_rows;) {
      batch.clear();
      for (; done < hour_rows && static_cast<int>(batch.size()) < batch_rows; ++done) {
        server::ReportRow& row = batch.emplace_back();
        row.metric_id = metric_id;
        row.design_version = 1;
        if ((stored + done) % 3 == 0) row.counters = {0};  // a yes: counter 0
        ids->Next(&id);
        std::copy(id.begin(), id.end(), row.report_id.begin());
        row.event_time_seconds = event_time;
      }
      DENIABLE_ASSIGN_OR_RETURN(server::AppendResult r, storage->AppendReports(batch));
      slice.rows += r.accepted;
      if (slice.rows >= slice_rows) {
        slice.rows_per_second = slice.rows / absl::ToDoubleSeconds(absl::Now() - slice_start);
        slices.push_back(slice);
        slice = LoadSlice{stored + done, 0, 0};
        slice_start = absl::Now();
      }
    }
    stored += hour_rows;
  }
  if (slice.rows > 0) {
    slice.rows_per_second = slice.rows / absl::ToDoubleSeconds(absl::Now() - slice_start);
    slices.push_back(slice);
  }
  return slices;
}

}  // namespace deniable::bench
