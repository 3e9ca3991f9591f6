#include "server/storage/postgres/postgres_connection.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "deniable/common/status_macros.h"
#include "server/storage/storage_error.h"

namespace deniable::server {

bool IsPostgresUri(absl::string_view db) {
  return absl::StartsWith(db, "postgresql://") || absl::StartsWith(db, "postgres://");
}

std::string RedactedConninfo(const std::string& conninfo) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
  if (options == nullptr) {
    PQfreemem(error);
    return "postgresql://(unparsable URI)";
  }
  std::string user, host, port, dbname;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    const absl::string_view key = o->keyword;
    if (key == "user") user = o->val;
    if (key == "host") host = o->val;
    if (key == "port") port = o->val;
    if (key == "dbname") dbname = o->val;
  }
  PQconninfoFree(options);
  return absl::StrCat("postgresql://", user, user.empty() ? "" : "@", host, port.empty() ? "" : ":",
                      port, "/", dbname);
}

absl::Status PostgresError(absl::string_view sqlstate, absl::string_view detail,
                           absl::string_view what) {
  const std::string message =
      absl::StrCat(what, ": ", absl::StripAsciiWhitespace(detail), " (SQLSTATE ",
                   sqlstate.empty() ? "none" : sqlstate, ")");
  const absl::string_view cls = sqlstate.substr(0, 2);
  if (sqlstate.empty() || cls == "08" || absl::StartsWith(sqlstate, "57P") || sqlstate == "57014") {
    return StorageFailure(absl::StatusCode::kUnavailable,
                          "storage: PostgreSQL cannot be reached now, retry later", message);
  }
  if (sqlstate == "40001" || sqlstate == "40P01" || sqlstate == "55P03" || cls == "53" ||
      cls == "58") {
    return StorageFailure(absl::StatusCode::kUnavailable,
                          "storage: PostgreSQL cannot take the write now, retry later", message);
  }
  if (sqlstate == "XX001" || sqlstate == "XX002") {
    return StorageFailure(absl::StatusCode::kDataLoss, "storage: the database is damaged", message);
  }
  if (sqlstate == "23505") {
    return StorageFailure(absl::StatusCode::kAlreadyExists, "storage: a database constraint failed",
                          message);
  }
  return StorageFailure(absl::StatusCode::kInternal,
                        "storage: a server fault stopped the operation", message);
}

int64_t PgResult::Int64(int row, int col) const {
  int64_t v = 0;
  (void)absl::SimpleAtoi(PQgetvalue(result_.get(), row, col), &v);
  return v;
}

double PgResult::Double(int row, int col) const {
  double v = 0;
  (void)absl::SimpleAtod(PQgetvalue(result_.get(), row, col), &v);
  return v;
}

std::string PgResult::Bytes(int row, int col) const {
  absl::string_view hex = PQgetvalue(result_.get(), row, col);
  absl::ConsumePrefix(&hex, "\\x");
  return absl::HexStringToBytes(hex);
}

int64_t PgResult::AffectedRows() const {
  int64_t v = 0;
  (void)absl::SimpleAtoi(PQcmdTuples(result_.get()), &v);
  return v;
}

PGconn* PgConnection::Open(const std::string& conninfo) {
  // Defaults first: the expanded URI (dbname) overrides them.
  const char* keywords[] = {"connect_timeout",     "application_name", "keepalives_idle",
                            "keepalives_interval", "dbname",           nullptr};
  const char* values[] = {"5", "deniable-server", "10", "5", conninfo.c_str(), nullptr};
  return PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
}

absl::StatusOr<std::unique_ptr<PgConnection>> PgConnection::Connect(const std::string& conninfo) {
  PGconn* conn = Open(conninfo);
  if (conn == nullptr || PQstatus(conn) != CONNECTION_OK) {
    const std::string detail = conn != nullptr ? PQerrorMessage(conn) : "out of memory";
    PQfinish(conn);
    return absl::UnavailableError(absl::StrCat("storage: cannot connect to ",
                                               RedactedConninfo(conninfo), ": ",
                                               absl::StripAsciiWhitespace(detail)));
  }
  // Server notices ("relation already exists, skipping") are not for the operator's log.
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  return std::unique_ptr<PgConnection>(new PgConnection(conninfo, conn));
}

PgConnection::~PgConnection() { PQfinish(conn_); }

absl::Status PgConnection::EnsureConnected() {
  if (PQstatus(conn_) == CONNECTION_OK) return absl::OkStatus();
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK) {
    return absl::UnavailableError(absl::StrCat("storage: lost the connection to ",
                                               RedactedConninfo(conninfo_),
                                               " and cannot reconnect now, retry later: ",
                                               absl::StripAsciiWhitespace(PQerrorMessage(conn_))));
  }
  ++reconnects_;
  prepared_.clear();
  return absl::OkStatus();
}

namespace {

// libpq's parameter values: each text, or null for SQL NULL; valid while `params` lives.
std::vector<const char*> ParamValues(const std::vector<PgParam>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const PgParam& p : params) values.push_back(p.has_value() ? p->c_str() : nullptr);
  return values;
}

}  // namespace

absl::StatusOr<PgResult> PgConnection::Finish(PGresult* raw, absl::string_view sql) {
  PgResult result(raw);
  const ExecStatusType status = raw != nullptr ? PQresultStatus(raw) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  return ResultError(raw, sql);
}

absl::StatusOr<PgResult> PgConnection::Exec(absl::string_view sql,
                                            const std::vector<PgParam>& params) {
  DENIABLE_RETURN_IF_ERROR(EnsureConnected());
  const std::vector<const char*> values = ParamValues(params);
  const std::string owned(sql);
  // Without parameters, the simple protocol (which also runs several statements, as the schema
  // steps do).
  return Finish(params.empty() ? PQexec(conn_, owned.c_str())
                               : PQexecParams(conn_, owned.c_str(), static_cast<int>(params.size()),
                                              nullptr, values.data(), nullptr, nullptr, 0),
                owned);
}

absl::StatusOr<PgResult> PgConnection::ExecPrepared(absl::string_view name, absl::string_view sql,
                                                    const std::vector<PgParam>& params) {
  DENIABLE_RETURN_IF_ERROR(EnsureConnected());
  const std::string owned_name(name);
  if (!prepared_.contains(owned_name)) {
    const std::string owned(sql);
    DENIABLE_RETURN_IF_ERROR(Finish(PQprepare(conn_, owned_name.c_str(), owned.c_str(),
                                              static_cast<int>(params.size()), nullptr),
                                    owned)
                                 .status());
    prepared_.insert(owned_name);
  }
  const std::vector<const char*> values = ParamValues(params);
  return Finish(PQexecPrepared(conn_, owned_name.c_str(), static_cast<int>(params.size()),
                               values.data(), nullptr, nullptr, 0),
                sql);
}

absl::Status PgConnection::ResultError(PGresult* raw, absl::string_view sql) {
  const char* state = raw != nullptr ? PQresultErrorField(raw, PG_DIAG_SQLSTATE) : nullptr;
  const std::string detail = raw != nullptr && *PQresultErrorMessage(raw) != '\0'
                                 ? PQresultErrorMessage(raw)
                                 : PQerrorMessage(conn_);
  // A lost connection yields no SQLSTATE (or 08xxx): UNAVAILABLE, and the next Exec reconnects.
  absl::string_view first_line = absl::StripLeadingAsciiWhitespace(sql);
  first_line = first_line.substr(0, first_line.find('\n'));
  return PostgresError(state != nullptr ? state : "", detail,
                       absl::StrCat("running \"", first_line.substr(0, 60), "\""));
}

absl::Status PgConnection::CopyIn(absl::string_view copy_sql, absl::string_view data) {
  DENIABLE_RETURN_IF_ERROR(EnsureConnected());
  const std::string owned(copy_sql);
  PgResult start(PQexec(conn_, owned.c_str()));
  if (PQresultStatus(start.get()) != PGRES_COPY_IN) return ResultError(start.get(), owned);
  const bool sent = PQputCopyData(conn_, data.data(), static_cast<int>(data.size())) == 1;
  const bool ended = PQputCopyEnd(conn_, sent ? nullptr : "client could not send the data") == 1;
  absl::Status s = absl::OkStatus();
  // Read every result (the last one is null) so the connection is ready for the next command.
  for (PGresult* raw; (raw = PQgetResult(conn_)) != nullptr;) {
    PgResult r(raw);
    if (s.ok() && PQresultStatus(raw) != PGRES_COMMAND_OK) s = ResultError(raw, owned);
  }
  if (s.ok() && !(sent && ended)) s = ResultError(nullptr, owned);
  return s;
}

absl::StatusOr<std::vector<PgResult>> PgConnection::ExecPipelined(
    absl::string_view sql, const std::vector<std::vector<PgParam>>& sets, int per_sync) {
  DENIABLE_RETURN_IF_ERROR(EnsureConnected());
  const std::string owned(sql);
  std::vector<PgResult> results;
  results.reserve(sets.size());
  absl::Status s = absl::OkStatus();
  if (PQenterPipelineMode(conn_) != 1) return ResultError(nullptr, owned);
  for (size_t first = 0; first < sets.size() && s.ok(); first += static_cast<size_t>(per_sync)) {
    const size_t last = std::min(sets.size(), first + static_cast<size_t>(per_sync));
    bool sent = true;
    for (size_t i = first; i < last && sent; ++i) {
      const std::vector<const char*> values = ParamValues(sets[i]);
      sent = PQsendQueryParams(conn_, owned.c_str(), static_cast<int>(values.size()), nullptr,
                               values.data(), nullptr, nullptr, 0) == 1;
    }
    if (!sent || PQpipelineSync(conn_) != 1) {
      s = ResultError(nullptr, owned);
      break;
    }
    // Each statement's result is followed by a null; the chunk ends with PGRES_PIPELINE_SYNC.
    for (size_t i = first; i <= last; ++i) {
      PGresult* raw = PQgetResult(conn_);
      if (raw == nullptr) {
        s = ResultError(nullptr, owned);
        break;
      }
      PgResult r(raw);
      const ExecStatusType status = PQresultStatus(raw);
      if (status == PGRES_PIPELINE_SYNC) break;
      if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
        if (s.ok()) s = ResultError(raw, owned);
      } else {
        results.push_back(std::move(r));
      }
      PGresult* end = PQgetResult(conn_);  // the null after a statement's result
      PQclear(end);
    }
  }
  // Drain what is left (after an error) so that the pipeline can be left.
  for (int spins = 0; PQpipelineStatus(conn_) != PQ_PIPELINE_OFF && spins < 1000000; ++spins) {
    if (PQstatus(conn_) != CONNECTION_OK) break;
    PGresult* raw = PQgetResult(conn_);
    if (raw == nullptr) {
      if (PQexitPipelineMode(conn_) == 1) break;
      continue;
    }
    PQclear(raw);
  }
  if (!s.ok()) return s;
  return results;
}

absl::Status PgConnection::Transaction(const std::function<absl::Status()>& body) {
  DENIABLE_RETURN_IF_ERROR(Exec("BEGIN").status());
  absl::Status s = body();
  if (s.ok()) {
    absl::StatusOr<PgResult> commit = Exec("COMMIT");
    // COMMIT of a transaction that failed answers ROLLBACK without an error.
    if (commit.ok() && PQstatus(conn_) == CONNECTION_OK &&
        PQtransactionStatus(conn_) == PQTRANS_IDLE) {
      return absl::OkStatus();
    }
    s = commit.ok() ? absl::UnavailableError("storage: COMMIT did not complete, retry later")
                    : commit.status();
  }
  if (PQstatus(conn_) == CONNECTION_OK && PQtransactionStatus(conn_) != PQTRANS_IDLE) {
    PGresult* r = PQexec(conn_, "ROLLBACK");
    PQclear(r);
  }
  return s;
}

std::string PgIntArray(const std::vector<int64_t>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    absl::StrAppend(&out, values[i]);
  }
  out += '}';
  return out;
}

std::string PgTextArray(const std::vector<std::string>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    for (char c : values[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

std::string CopyText(absl::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string PgBytea(absl::string_view bytes) {
  return absl::StrCat("\\x", absl::BytesToHexString(bytes));
}

}  // namespace deniable::server
