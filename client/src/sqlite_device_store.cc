#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "client/src/ledger_update.h"
#include "deniable/client/device_store.h"
#include "deniable/common/status_macros.h"

namespace deniable::client {
namespace {

constexpr int kApplicationId = 0x444E4231;  // "DNB1": a Deniable device store (every schema)

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS memo(
  metric TEXT NOT NULL, version INTEGER NOT NULL, value INTEGER NOT NULL, bit INTEGER NOT NULL,
  PRIMARY KEY (metric, version, value)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS queue(
  seq INTEGER PRIMARY KEY AUTOINCREMENT, metric TEXT NOT NULL, report BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS ledger(
  metric TEXT PRIMARY KEY, accepted INTEGER NOT NULL, acknowledged INTEGER NOT NULL,
  randomizations INTEGER NOT NULL, epsilon_spent REAL NOT NULL, epsilon_if_fresh REAL NOT NULL,
  period_start INTEGER NOT NULL, period_reports INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS counters(
  id INTEGER PRIMARY KEY CHECK (id = 1), acknowledged INTEGER NOT NULL,
  duplicates INTEGER NOT NULL, dropped_rejected INTEGER NOT NULL,
  dropped_queue_full INTEGER NOT NULL, dropped_too_old INTEGER NOT NULL DEFAULT 0,
  dropped_design_mismatch INTEGER NOT NULL DEFAULT 0);
INSERT OR IGNORE INTO counters(id, acknowledged, duplicates, dropped_rejected, dropped_queue_full)
  VALUES (1, 0, 0, 0, 0);
CREATE TABLE IF NOT EXISTS designs(metric TEXT PRIMARY KEY, response BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS category_memo(
  metric TEXT NOT NULL, version INTEGER NOT NULL, category INTEGER NOT NULL, report BLOB NOT NULL,
  PRIMARY KEY (metric, version, category)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS numeric_memo(
  metric TEXT NOT NULL, version INTEGER NOT NULL, level INTEGER NOT NULL, answer BLOB NOT NULL,
  PRIMARY KEY (metric, version, level)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS numeric_alpha(metric TEXT PRIMARY KEY, alpha REAL NOT NULL);
CREATE TABLE IF NOT EXISTS string_memo(
  metric TEXT NOT NULL, version INTEGER NOT NULL, value_key BLOB NOT NULL, answer BLOB NOT NULL,
  PRIMARY KEY (metric, version, value_key)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS heavy_hitters_group(
  metric TEXT NOT NULL, version INTEGER NOT NULL, salt INTEGER NOT NULL, device_group INTEGER NOT NULL,
  PRIMARY KEY (metric, version, salt)) WITHOUT ROWID;
PRAGMA user_version = 5;
)sql";
// Schema history (PRAGMA user_version): 0 or 1, the first release (memo of bits only); 2 adds
// category_memo (metrics with categories); 3 adds ledger.last_report (the event time of the
// metric's last queued report, for the window flags; 0 in an older store); 4 adds numeric_memo
// (answers per level of a numeric metric), numeric_alpha (alpha-point rounding's alpha per
// metric) and ledger.clipped (values clipped to the range); 5 adds string_memo (answers per
// HeavyHittersValueKey of a heavy-hitters metric: a hash, never the value) and
// heavy_hitters_group (the device's group per design; the salt is stored as its 64 bits read as
// a signed integer). Every step is additive,
// so opening an older file with kSchema above migrates it in place and keeps all of its rows.

// Columns added to the ledger after the first release; a store written before gains them with
// these defaults when it is opened.
constexpr struct {
  const char* column;
  const char* definition;
} kLedgerColumnsAdded[] = {
    {"repeated", "INTEGER NOT NULL DEFAULT 0"},
    {"last_report", "INTEGER NOT NULL DEFAULT 0"},
    {"clipped", "INTEGER NOT NULL DEFAULT 0"},
};

// RAII over one prepared statement; reset on destruction. Used under the store's mutex only.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) stmt_ = nullptr;
  }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  absl::Status status() const {
    return stmt_ != nullptr ? absl::OkStatus()
                            : absl::InternalError(absl::StrCat("sqlite: ", sqlite3_errmsg(db_)));
  }
  Stmt& Bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Stmt& Bind(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  Stmt& Bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& BindBlob(int i, const std::string& v) {
    sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  // True for a row, false when done; errors become a status.
  absl::StatusOr<bool> Step() {
    DENIABLE_RETURN_IF_ERROR(status());
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return absl::UnavailableError(absl::StrCat("sqlite: ", sqlite3_errmsg(db_)));
  }
  absl::Status Run() { return Step().status(); }
  int64_t Int(int c) const { return sqlite3_column_int64(stmt_, c); }
  double Double(int c) const { return sqlite3_column_double(stmt_, c); }
  std::string Text(int c) const {
    const void* data = sqlite3_column_blob(stmt_, c);
    const int size = sqlite3_column_bytes(stmt_, c);
    return data == nullptr ? std::string() : std::string(static_cast<const char*>(data), size);
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteDeviceStore : public DeviceStore {
 public:
  explicit SqliteDeviceStore(sqlite3* db) : db_(db) {}
  ~SqliteDeviceStore() override { sqlite3_close(db_); }

  absl::StatusOr<std::optional<bool>> LookupMemo(const std::string& metric, uint32_t design_version,
                                                 bool true_value) override {
    absl::MutexLock lock(&mu_);
    Stmt s(db_, "SELECT bit FROM memo WHERE metric = ?1 AND version = ?2 AND value = ?3");
    s.Bind(1, metric).Bind(2, int64_t{design_version}).Bind(3, int64_t{true_value ? 1 : 0});
    DENIABLE_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return std::nullopt;
    return s.Int(0) != 0;
  }

  absl::StatusOr<std::optional<v1::CategoricalReport>> LookupCategoryMemo(
      const std::string& metric, uint32_t design_version, int32_t category) override {
    absl::MutexLock lock(&mu_);
    Stmt s(db_,
           "SELECT report FROM category_memo WHERE metric = ?1 AND version = ?2 AND category = ?3");
    s.Bind(1, metric).Bind(2, int64_t{design_version}).Bind(3, int64_t{category});
    DENIABLE_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return std::nullopt;
    v1::CategoricalReport report;
    if (!report.ParseFromString(s.Text(0))) {
      return absl::DataLossError(
          absl::StrCat("category_memo row of metric \"", metric, "\" is not a categorical report"));
    }
    return report;
  }

  absl::StatusOr<std::optional<v1::Report>> LookupNumericMemo(const std::string& metric,
                                                              uint32_t design_version,
                                                              int32_t level) override {
    absl::MutexLock lock(&mu_);
    Stmt s(db_,
           "SELECT answer FROM numeric_memo WHERE metric = ?1 AND version = ?2 AND level = ?3");
    s.Bind(1, metric).Bind(2, int64_t{design_version}).Bind(3, int64_t{level});
    DENIABLE_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return std::nullopt;
    v1::Report answer;
    if (!answer.ParseFromString(s.Text(0))) {
      return absl::DataLossError(
          absl::StrCat("numeric_memo row of metric \"", metric, "\" is not a report"));
    }
    return answer;
  }

  absl::StatusOr<std::optional<double>> LoadNumericAlpha(const std::string& metric) override {
    absl::MutexLock lock(&mu_);
    Stmt s(db_, "SELECT alpha FROM numeric_alpha WHERE metric = ?1");
    s.Bind(1, metric);
    DENIABLE_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return std::nullopt;
    return s.Double(0);
  }

  absl::Status SaveNumericAlpha(const std::string& metric, double alpha) override {
    absl::MutexLock lock(&mu_);
    Stmt s(db_, "INSERT OR IGNORE INTO numeric_alpha VALUES (?1, ?2)");
    return s.Bind(1, metric).Bind(2, alpha).Run();
  }

  absl::StatusOr<std::optional<v1::Report>> LookupStringMemo(
      const std::string& metric, uint32_t design_version, const std::string& value_key) override {
    absl::MutexLock lock(&mu_);
    Stmt s(db_,
           "SELECT answer FROM string_memo WHERE metric = ?1 AND version = ?2 AND value_key = ?3");
    s.Bind(1, metric).Bind(2, int64_t{design_version}).BindBlob(3, value_key);
    DENIABLE_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return std::nullopt;
    v1::Report answer;
    if (!answer.ParseFromString(s.Text(0))) {
      return absl::DataLossError(
          absl::StrCat("string_memo row of metric \"", metric, "\" is not a report"));
    }
    return answer;
  }

  absl::StatusOr<std::optional<uint32_t>> LoadHeavyHittersGroup(const std::string& metric,
                                                                uint32_t design_version,
                                                                uint64_t salt) override {
    absl::MutexLock lock(&mu_);
    Stmt s(db_,
           "SELECT device_group FROM heavy_hitters_group WHERE metric = ?1 AND version = ?2 AND "
           "salt = ?3");
    s.Bind(1, metric).Bind(2, int64_t{design_version}).Bind(3, static_cast<int64_t>(salt));
    DENIABLE_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return std::nullopt;
    const int64_t group = s.Int(0);
    if (group < 0 || group > UINT32_MAX) {
      return absl::DataLossError(
          absl::StrCat("heavy_hitters_group row of metric \"", metric, "\" is out of range"));
    }
    return static_cast<uint32_t>(group);
  }

  absl::Status SaveHeavyHittersGroup(const std::string& metric, uint32_t design_version,
                                     uint64_t salt, uint32_t group) override {
    absl::MutexLock lock(&mu_);
    Stmt s(db_, "INSERT OR IGNORE INTO heavy_hitters_group VALUES (?1, ?2, ?3, ?4)");
    return s.Bind(1, metric)
        .Bind(2, int64_t{design_version})
        .Bind(3, static_cast<int64_t>(salt))
        .Bind(4, int64_t{group})
        .Run();
  }

  absl::Status CommitReport(const ReportCommit& commit) override {
    absl::MutexLock lock(&mu_);
    return InTransaction([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::Status {
      const std::string& metric = commit.report.metric();
      if (commit.memo.has_value()) {
        Stmt s(db_, "INSERT OR REPLACE INTO memo VALUES (?1, ?2, ?3, ?4)");
        DENIABLE_RETURN_IF_ERROR(s.Bind(1, metric)
                                     .Bind(2, int64_t{commit.memo->design_version})
                                     .Bind(3, int64_t{commit.memo->true_value ? 1 : 0})
                                     .Bind(4, int64_t{commit.memo->bit ? 1 : 0})
                                     .Run());
      }
      if (commit.category_memo.has_value()) {
        Stmt s(db_, "INSERT OR REPLACE INTO category_memo VALUES (?1, ?2, ?3, ?4)");
        DENIABLE_RETURN_IF_ERROR(s.Bind(1, metric)
                                     .Bind(2, int64_t{commit.category_memo->design_version})
                                     .Bind(3, int64_t{commit.category_memo->category})
                                     .BindBlob(4, commit.category_memo->report.SerializeAsString())
                                     .Run());
      }
      if (commit.numeric_memo.has_value()) {
        Stmt s(db_, "INSERT OR REPLACE INTO numeric_memo VALUES (?1, ?2, ?3, ?4)");
        DENIABLE_RETURN_IF_ERROR(s.Bind(1, metric)
                                     .Bind(2, int64_t{commit.numeric_memo->design_version})
                                     .Bind(3, int64_t{commit.numeric_memo->level})
                                     .BindBlob(4, commit.numeric_memo->answer.SerializeAsString())
                                     .Run());
      }
      if (commit.string_memo.has_value()) {
        Stmt s(db_, "INSERT OR REPLACE INTO string_memo VALUES (?1, ?2, ?3, ?4)");
        DENIABLE_RETURN_IF_ERROR(s.Bind(1, metric)
                                     .Bind(2, int64_t{commit.string_memo->design_version})
                                     .BindBlob(3, commit.string_memo->value_key)
                                     .BindBlob(4, commit.string_memo->answer.SerializeAsString())
                                     .Run());
      }
      DENIABLE_ASSIGN_OR_RETURN(MetricLedger ledger, ReadLedgerRow(metric));
      ApplyCommitToLedger(commit, &ledger);
      DENIABLE_RETURN_IF_ERROR(WriteLedgerRow(metric, ledger));
      Stmt insert(db_, "INSERT INTO queue(metric, report) VALUES (?1, ?2)");
      DENIABLE_RETURN_IF_ERROR(
          insert.Bind(1, metric).BindBlob(2, commit.report.SerializeAsString()).Run());
      int64_t evicted = 0;
      if (queued_ + 1 > commit.max_queued_reports) {
        Stmt evict(db_,
                   "DELETE FROM queue WHERE seq IN (SELECT seq FROM queue ORDER BY seq LIMIT ?1)");
        DENIABLE_RETURN_IF_ERROR(evict.Bind(1, queued_ + 1 - commit.max_queued_reports).Run());
        evicted = sqlite3_changes(db_);
      }
      queued_ += 1 - evicted;
      if (evicted > 0) {
        DeliveryCounters add;
        add.dropped_queue_full = evicted;
        DENIABLE_RETURN_IF_ERROR(AddToCounters(add));
      }
      return absl::OkStatus();
    });
  }

  absl::StatusOr<std::vector<QueuedReport>> PeekOldest(int64_t limit) override {
    absl::MutexLock lock(&mu_);
    Stmt s(db_, "SELECT seq, report FROM queue ORDER BY seq LIMIT ?1");
    s.Bind(1, limit);
    std::vector<QueuedReport> out;
    while (true) {
      DENIABLE_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      QueuedReport& q = out.emplace_back();
      q.sequence = s.Int(0);
      if (!q.report.ParseFromString(s.Text(1))) {
        return absl::DataLossError(absl::StrCat("queue row ", q.sequence, " is not a report"));
      }
    }
    return out;
  }

  absl::Status RemoveReports(const std::vector<int64_t>& sequences, bool acknowledged,
                             const DeliveryCounters& increments) override {
    absl::MutexLock lock(&mu_);
    return InTransaction([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::Status {
      for (int64_t sequence : sequences) {
        if (acknowledged) {
          Stmt s(db_,
                 "UPDATE ledger SET acknowledged = acknowledged + 1 "
                 "WHERE metric = (SELECT metric FROM queue WHERE seq = ?1)");
          DENIABLE_RETURN_IF_ERROR(s.Bind(1, sequence).Run());
        }
        Stmt s(db_, "DELETE FROM queue WHERE seq = ?1");
        DENIABLE_RETURN_IF_ERROR(s.Bind(1, sequence).Run());
        queued_ -= sqlite3_changes(db_);
      }
      return AddToCounters(increments);
    });
  }

  absl::Status CountRepeatedReport(const std::string& metric) override {
    absl::MutexLock lock(&mu_);
    return InTransaction([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::Status {
      DENIABLE_ASSIGN_OR_RETURN(MetricLedger ledger, ReadLedgerRow(metric));
      ++ledger.reports_repeated_in_period;
      return WriteLedgerRow(metric, ledger);
    });
  }

  // Adds the columns of kLedgerColumnsAdded that the ledger table lacks (at open).
  absl::Status MigrateLedger() {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> present;
    {
      Stmt info(db_, "PRAGMA table_info(ledger)");
      while (true) {
        DENIABLE_ASSIGN_OR_RETURN(bool row, info.Step());
        if (!row) break;
        present.push_back(info.Text(1));
      }
    }
    for (const auto& added : kLedgerColumnsAdded) {
      if (std::find(present.begin(), present.end(), added.column) != present.end()) continue;
      DENIABLE_RETURN_IF_ERROR(
          Exec(absl::StrCat("ALTER TABLE ledger ADD COLUMN ", added.column, " ", added.definition)
                   .c_str()));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<int64_t> QueueSize() override {
    absl::MutexLock lock(&mu_);
    return queued_;
  }

  // Reads the queue length from the file (at open, and after a failed transaction).
  absl::Status Recount() {
    absl::MutexLock lock(&mu_);
    return RecountLocked();
  }

  absl::StatusOr<std::map<std::string, MetricLedger>> ReadLedger() override {
    absl::MutexLock lock(&mu_);
    Stmt s(db_, "SELECT metric FROM ledger");
    std::map<std::string, MetricLedger> out;
    while (true) {
      DENIABLE_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      const std::string metric = s.Text(0);
      DENIABLE_ASSIGN_OR_RETURN(out[metric], ReadLedgerRow(metric));
    }
    return out;
  }

  absl::StatusOr<DeliveryCounters> ReadCounters() override {
    absl::MutexLock lock(&mu_);
    Stmt s(db_,
           "SELECT acknowledged, duplicates, dropped_rejected, dropped_queue_full, "
           "dropped_too_old, dropped_design_mismatch FROM counters");
    DENIABLE_RETURN_IF_ERROR(s.Step().status());
    DeliveryCounters c;
    c.acknowledged = s.Int(0);
    c.duplicates = s.Int(1);
    c.dropped_rejected = s.Int(2);
    c.dropped_queue_full = s.Int(3);
    c.dropped_too_old = s.Int(4);
    c.dropped_design_mismatch = s.Int(5);
    return c;
  }

  absl::Status ForgetMemo(const std::string& metric, uint32_t design_version) override {
    absl::MutexLock lock(&mu_);
    return InTransaction([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::Status {
      for (const char* sql : {"DELETE FROM memo WHERE metric = ?1 AND version = ?2",
                              "DELETE FROM category_memo WHERE metric = ?1 AND version = ?2",
                              "DELETE FROM numeric_memo WHERE metric = ?1 AND version = ?2",
                              "DELETE FROM string_memo WHERE metric = ?1 AND version = ?2"}) {
        Stmt s(db_, sql);
        DENIABLE_RETURN_IF_ERROR(s.Bind(1, metric).Bind(2, int64_t{design_version}).Run());
      }
      return absl::OkStatus();
    });
  }

  absl::StatusOr<std::optional<std::string>> LoadDesign(const std::string& metric) override {
    absl::MutexLock lock(&mu_);
    Stmt s(db_, "SELECT response FROM designs WHERE metric = ?1");
    s.Bind(1, metric);
    DENIABLE_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return std::nullopt;
    return s.Text(0);
  }

  absl::Status SaveDesign(const std::string& metric, const std::string& serialized) override {
    absl::MutexLock lock(&mu_);
    Stmt s(db_, "INSERT OR REPLACE INTO designs VALUES (?1, ?2)");
    return s.Bind(1, metric).BindBlob(2, serialized).Run();
  }

 private:
  template <typename F>
  absl::Status InTransaction(F body) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    DENIABLE_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
    absl::Status status = body();
    if (status.ok()) status = Exec("COMMIT");
    if (!status.ok()) {
      Exec("ROLLBACK").IgnoreError();
      RecountLocked().IgnoreError();
    }
    return status;
  }

  absl::Status RecountLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Stmt s(db_, "SELECT count(*) FROM queue");
    DENIABLE_RETURN_IF_ERROR(s.Step().status());
    queued_ = s.Int(0);
    return absl::OkStatus();
  }

  absl::Status Exec(const char* sql) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) == SQLITE_OK) return absl::OkStatus();
    absl::Status status = absl::UnavailableError(
        absl::StrCat("sqlite: ", error != nullptr ? error : sqlite3_errmsg(db_)));
    sqlite3_free(error);
    return status;
  }

  absl::StatusOr<MetricLedger> ReadLedgerRow(const std::string& metric)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Stmt s(db_,
           "SELECT accepted, acknowledged, randomizations, epsilon_spent, epsilon_if_fresh, "
           "period_start, period_reports, repeated, last_report, clipped FROM ledger "
           "WHERE metric = ?1");
    s.Bind(1, metric);
    MetricLedger l;
    DENIABLE_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return l;
    l.reports_accepted = s.Int(0);
    l.reports_acknowledged = s.Int(1);
    l.randomizations = s.Int(2);
    l.epsilon_spent = s.Double(3);
    l.epsilon_if_fresh = s.Double(4);
    l.period_start_seconds = s.Int(5);
    l.reports_this_period = s.Int(6);
    l.reports_repeated_in_period = s.Int(7);
    l.last_report_seconds = s.Int(8);
    l.values_clipped = s.Int(9);
    return l;
  }

  absl::Status WriteLedgerRow(const std::string& metric, const MetricLedger& l)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Stmt s(db_,
           "INSERT OR REPLACE INTO ledger(metric, accepted, acknowledged, randomizations, "
           "epsilon_spent, epsilon_if_fresh, period_start, period_reports, repeated, "
           "last_report, clipped) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    return s.Bind(1, metric)
        .Bind(2, l.reports_accepted)
        .Bind(3, l.reports_acknowledged)
        .Bind(4, l.randomizations)
        .Bind(5, l.epsilon_spent)
        .Bind(6, l.epsilon_if_fresh)
        .Bind(7, l.period_start_seconds)
        .Bind(8, l.reports_this_period)
        .Bind(9, l.reports_repeated_in_period)
        .Bind(10, l.last_report_seconds)
        .Bind(11, l.values_clipped)
        .Run();
  }

  absl::Status AddToCounters(const DeliveryCounters& add) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Stmt s(db_,
           "UPDATE counters SET acknowledged = acknowledged + ?1, duplicates = duplicates + ?2, "
           "dropped_rejected = dropped_rejected + ?3, "
           "dropped_queue_full = dropped_queue_full + ?4, dropped_too_old = dropped_too_old + ?5, "
           "dropped_design_mismatch = dropped_design_mismatch + ?6");
    return s.Bind(1, add.acknowledged)
        .Bind(2, add.duplicates)
        .Bind(3, add.dropped_rejected)
        .Bind(4, add.dropped_queue_full)
        .Bind(5, add.dropped_too_old)
        .Bind(6, add.dropped_design_mismatch)
        .Run();
  }

  absl::Mutex mu_;
  sqlite3* const db_;
  int64_t queued_ ABSL_GUARDED_BY(mu_) = 0;  // rows in `queue`; this store is the only writer
};

}  // namespace

absl::StatusOr<std::unique_ptr<DeviceStore>> OpenSqliteDeviceStore(
    const SqliteDeviceStoreOptions& options) {
  if (options.path.empty()) return absl::InvalidArgumentError("path: must not be empty");
  // Create the file ourselves so that it is private from the first byte (SQLite gives its
  // -wal and -shm files the same mode).
  const int fd = ::open(options.path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("path: cannot open \"", options.path, "\""));
  }
  ::fchmod(fd, 0600);
  ::close(fd);
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(options.path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return absl::UnavailableError(absl::StrCat("path: cannot open \"", options.path, "\""));
  }
  auto store = std::make_unique<SqliteDeviceStore>(db);
  sqlite3_busy_timeout(db, 5000);
  {  // statements finalized before the setup below (an open read blocks the WAL switch)
    Stmt app_id(db, "PRAGMA application_id");
    Stmt tables(db, "SELECT count(*) FROM sqlite_master");
    auto app_row = app_id.Step();
    auto table_row = tables.Step();
    if (!app_row.ok() || !table_row.ok()) {
      return absl::DataLossError(absl::StrCat("path: \"", options.path, "\" is not a database"));
    }
    if (app_id.Int(0) != kApplicationId && tables.Int(0) != 0) {
      return absl::DataLossError(
          absl::StrCat("path: \"", options.path, "\" is not a Deniable device store"));
    }
  }
  const std::string setup = absl::StrCat(
      "PRAGMA journal_mode=WAL; PRAGMA synchronous=", options.sync_every_report ? "FULL" : "NORMAL",
      "; PRAGMA application_id=", kApplicationId, ";", kSchema);
  char* error = nullptr;
  if (sqlite3_exec(db, setup.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    absl::Status status = absl::UnavailableError(
        absl::StrCat("path: \"", options.path, "\": ", error != nullptr ? error : "sqlite error"));
    sqlite3_free(error);
    return status;
  }
  DENIABLE_RETURN_IF_ERROR(store->MigrateLedger());
  // Stores created before dropped_too_old existed get the column (an error only when it exists).
  sqlite3_exec(db, "ALTER TABLE counters ADD COLUMN dropped_too_old INTEGER NOT NULL DEFAULT 0",
               nullptr, nullptr, nullptr);
  sqlite3_exec(db,
               "ALTER TABLE counters ADD COLUMN dropped_design_mismatch INTEGER NOT NULL DEFAULT 0",
               nullptr, nullptr, nullptr);
  DENIABLE_RETURN_IF_ERROR(store->Recount());
  return store;
}

}  // namespace deniable::client
