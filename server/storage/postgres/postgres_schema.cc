#include "server/storage/postgres/postgres_schema.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "deniable/common/status_macros.h"

namespace deniable::server {
namespace {

// Advisory lock keys ("deniable" in ASCII, then 1 for the schema, 2 for partitions).
constexpr int64_t kSchemaLockKey = 0x64656e6961626c01;
constexpr int64_t kPartitionLockKey = 0x64656e6961626c02;

// Migration step N brings version N-1 to N. Step 1 creates everything.
constexpr const char* kSteps[] = {
    R"sql(
CREATE TABLE metrics(
  id bigserial PRIMARY KEY,
  name text NOT NULL UNIQUE,
  description text NOT NULL,
  created_time_seconds bigint NOT NULL,
  time_precision_seconds bigint NOT NULL,
  min_reports bigint NOT NULL DEFAULT 0,
  reporting_period_seconds bigint NOT NULL DEFAULT 86400,
  randomization integer NOT NULL DEFAULT 1);
CREATE TABLE designs(
  metric_id bigint NOT NULL REFERENCES metrics(id),
  version integer NOT NULL,
  parameters bytea NOT NULL,
  a double precision NOT NULL,
  b double precision NOT NULL,
  created_time_seconds bigint NOT NULL,
  PRIMARY KEY (metric_id, version));
CREATE TABLE reports(
  metric_id bigint NOT NULL,
  event_time bigint NOT NULL,
  report_id uuid NOT NULL,
  version integer NOT NULL,
  bit boolean NOT NULL,
  labels text NOT NULL,
  PRIMARY KEY (metric_id, event_time, report_id)) PARTITION BY RANGE (event_time);
CREATE TABLE counts(
  metric_id bigint NOT NULL,
  event_time bigint NOT NULL,
  version integer NOT NULL,
  labels text COLLATE "C" NOT NULL,
  shard integer NOT NULL,
  n bigint NOT NULL,
  yes bigint NOT NULL,
  PRIMARY KEY (metric_id, event_time, version, labels, shard));
CREATE TABLE auth_tokens(
  id bigserial PRIMARY KEY,
  hash bytea NOT NULL UNIQUE,
  role text NOT NULL,
  label text NOT NULL,
  created_time_seconds bigint NOT NULL,
  revoked_time_seconds bigint);
CREATE SEQUENCE collector_shards;
)sql",
    // Categorical metrics: their category names (comma-separated; '' for yes/no metrics), and
    // one support count per (metric, event time, version, labels, shard, category).
    R"sql(
ALTER TABLE metrics ADD COLUMN categories text NOT NULL DEFAULT '';
CREATE TABLE category_counts(
  metric_id bigint NOT NULL,
  event_time bigint NOT NULL,
  version integer NOT NULL,
  labels text COLLATE "C" NOT NULL,
  shard integer NOT NULL,
  category integer NOT NULL,
  support bigint NOT NULL,
  PRIMARY KEY (metric_id, event_time, version, labels, shard, category));
)sql",
    // 3: rate-limit buckets shared by the collectors
    // (server/storage/postgres/postgres_rate_buckets.h). UNLOGGED: no WAL per take; a crash empties
    // it and buckets come back full.
    R"sql(
CREATE UNLOGGED TABLE rate_buckets(
  key text PRIMARY KEY,
  level double precision NOT NULL,
  updated timestamptz NOT NULL);
)sql",
    // 4: retention (Storage::SetRetention, ApplyRetention); existing metrics keep everything.
    R"sql(
ALTER TABLE metrics ADD COLUMN retention_days bigint NOT NULL DEFAULT 0;
ALTER TABLE metrics ADD COLUMN retention_policy integer NOT NULL DEFAULT 1;
)sql",
    // 5: each metric's stored label values, for the cap on distinct values of a label key
    // (label_values.h), filled from the label sets of its counts.
    R"sql(
CREATE TABLE label_values(
  metric_id bigint NOT NULL,
  key text NOT NULL,
  value text NOT NULL,
  PRIMARY KEY (metric_id, key, value));
INSERT INTO label_values(metric_id, key, value)
  SELECT DISTINCT c.metric_id, split_part(kv, '=', 1), substr(kv, strpos(kv, '=') + 1)
  FROM (SELECT DISTINCT metric_id, labels FROM counts WHERE labels <> '') c,
       unnest(string_to_array(c.labels, ',')) AS kv;
)sql",
    // 6: window flags (issue 26; sqlite_schema.h version 5): the metric options (existing
    // metrics: flags on, periodic reports) and per count key, shard and window (0 day, 1 week,
    // 2 month) the reports first in it (category -2), their yes count (-1) and their support of
    // category v (v >= 0).
    R"sql(
ALTER TABLE metrics ADD COLUMN window_firsts_off integer NOT NULL DEFAULT 0;
ALTER TABLE metrics ADD COLUMN reporting_once integer NOT NULL DEFAULT 0;
CREATE TABLE first_counts(
  metric_id bigint NOT NULL,
  event_time bigint NOT NULL,
  version integer NOT NULL,
  labels text COLLATE "C" NOT NULL,
  shard integer NOT NULL,
  win integer NOT NULL,
  category integer NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (metric_id, event_time, version, labels, shard, win, category));
)sql",
    // 7: one form of counts for every kind of report (issue 27; sqlite_schema.h version 7):
    // counts.yes becomes counter0 (counter 0 of the mechanism's vector, for every kind; a
    // categorical row's support of category 0 moves there, shard by shard); category_counts
    // becomes counter_sums(..., counter, total) for counters 1 and up; first_counts.category
    // becomes counter (-1: the reports first in the window, was -2; j: their counter j, yes was
    // -1). The first_counts keys move in two steps, since a unique key is checked row by row.
    R"sql(
ALTER TABLE counts RENAME COLUMN yes TO counter0;
UPDATE counts c SET counter0 = cc.support FROM category_counts cc
  WHERE cc.metric_id = c.metric_id AND cc.event_time = c.event_time AND cc.version = c.version
    AND cc.labels = c.labels AND cc.shard = c.shard AND cc.category = 0;
DELETE FROM category_counts WHERE category = 0;
ALTER TABLE category_counts RENAME TO counter_sums;
ALTER TABLE counter_sums RENAME COLUMN category TO counter;
ALTER TABLE counter_sums RENAME COLUMN support TO total;
ALTER TABLE first_counts RENAME COLUMN category TO counter;
UPDATE first_counts SET counter = counter - 10 WHERE counter < 0;
UPDATE first_counts SET counter = counter + 11 WHERE counter < -2;
)sql",
    // 8: counters 1 and up in chunks (issue 37; sqlite_schema.h version 10): every counter_sums
    // row (win -1) and every first_counts row of a counter >= 1 goes into the counter_chunks row
    // of its key, shard, window and counter / 1024, its offset (counter % 1024) and sum in the
    // parallel arrays offsets and sums, ascending (postgres_counter_sums.h). A counter outside
    // [1, 2^24) or a negative sum stops the migration (XX001: DATA_LOSS naming the table) rather
    // than storing a wrong count; zero sums are dropped.
    R"sql(
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM counter_sums WHERE counter < 1 OR counter >= 16777216 OR total < 0)
  THEN
    RAISE EXCEPTION USING ERRCODE = 'data_corrupted', MESSAGE = 'counter_sums: a row has a '
      'counter outside [1, 16777216) or a negative total; the migration to schema version 8 '
      'stopped';
  END IF;
  IF EXISTS (SELECT 1 FROM first_counts WHERE counter >= 16777216 OR win < 0 OR win > 2
             OR count < 0) THEN
    RAISE EXCEPTION USING ERRCODE = 'data_corrupted', MESSAGE = 'first_counts: a row has a '
      'counter past 16777215, a window outside [0, 2] or a negative count; the migration to '
      'schema version 8 stopped';
  END IF;
END $$;
CREATE TABLE counter_chunks(
  metric_id bigint NOT NULL,
  event_time bigint NOT NULL,
  version integer NOT NULL,
  labels text COLLATE "C" NOT NULL,
  shard integer NOT NULL,
  win integer NOT NULL,
  chunk integer NOT NULL,
  offsets integer[] NOT NULL,
  sums bigint[] NOT NULL,
  PRIMARY KEY (metric_id, event_time, version, labels, shard, win, chunk));
INSERT INTO counter_chunks
  SELECT metric_id, event_time, version, labels, shard, win, counter / 1024,
         array_agg(counter % 1024 ORDER BY counter), array_agg(total ORDER BY counter)
  FROM (SELECT metric_id, event_time, version, labels, shard, -1 AS win, counter, total
          FROM counter_sums WHERE total > 0
        UNION ALL
        SELECT metric_id, event_time, version, labels, shard, win, counter, count
          FROM first_counts WHERE counter >= 1 AND count > 0) c
  GROUP BY metric_id, event_time, version, labels, shard, win, counter / 1024;
DELETE FROM first_counts WHERE counter >= 1;
DROP TABLE counter_sums;
)sql",
    // 9: the chunk merge as a function (postgres_counter_sums.h, kMergeCounterChunk): an append
    // adds a few cells to a chunk of up to 1024, so each is found by binary search and added in
    // place or spliced in, where the SQL merge (unnest both, UNION ALL, GROUP BY, two ordered
    // array_agg) took 6x as long (45 us against 7 us adding one cell to 61); more than 16 cells to
    // add (a move of a metric-hour) take that SQL merge, in one pass. CREATE OR REPLACE: a database
    // brought back to an earlier version keeps its function.
    R"sql(
CREATE OR REPLACE FUNCTION deniable_merge_chunk(ao integer[], asum bigint[], bo integer[],
    bs bigint[], OUT o integer[], OUT s bigint[])
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  n integer := coalesce(array_length(ao, 1), 0);
  m integer := coalesce(array_length(bo, 1), 0);
  lo integer; hi integer; mid integer; x integer;
BEGIN
  IF m > 16 THEN
    SELECT coalesce(array_agg(g.o ORDER BY g.o), '{}'), coalesce(array_agg(g.s ORDER BY g.o), '{}')
      INTO o, s
      FROM (SELECT a.o, sum(a.s)::bigint FROM (SELECT * FROM unnest(ao, asum) UNION ALL
            SELECT * FROM unnest(bo, bs)) a(o, s) GROUP BY a.o) g(o, s);
    RETURN;
  END IF;
  o := ao;
  s := asum;
  FOR j IN 1..m LOOP
    x := bo[j];
    lo := 1;
    hi := n;
    WHILE lo <= hi LOOP
      mid := (lo + hi) / 2;
      IF o[mid] < x THEN
        lo := mid + 1;
      ELSIF o[mid] > x THEN
        hi := mid - 1;
      ELSE
        lo := -mid;
        EXIT;
      END IF;
    END LOOP;
    IF lo < 0 THEN
      s[-lo] := s[-lo] + bs[j];
    ELSE
      o := o[1:lo - 1] || x || o[lo:n];
      s := s[1:lo - 1] || bs[j] || s[lo:n];
      n := n + 1;
    END IF;
  END LOOP;
END $$;
)sql",
};
static_assert(sizeof(kSteps) / sizeof(kSteps[0]) == kPostgresSchemaVersion);

absl::Status Migrate(PgConnection& conn) {
  DENIABLE_RETURN_IF_ERROR(
      conn.Exec("CREATE TABLE IF NOT EXISTS schema_version(version integer NOT NULL)").status());
  DENIABLE_ASSIGN_OR_RETURN(PgResult current,
                            conn.Exec("SELECT coalesce(max(version), 0) FROM schema_version"));
  const int64_t have = current.Int64(0, 0);
  if (have > kPostgresSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "storage: the PostgreSQL schema is version ", have, ", newer than this server's ",
        kPostgresSchemaVersion, "; upgrade the server (docs/deploy.md, \"Upgrades\")"));
  }
  for (int64_t step = have + 1; step <= kPostgresSchemaVersion; ++step) {
    const absl::Status applied = conn.Transaction([&]() -> absl::Status {
      DENIABLE_RETURN_IF_ERROR(conn.Exec(kSteps[step - 1]).status());
      return conn.Exec("INSERT INTO schema_version VALUES ($1)", {absl::StrCat(step)}).status();
    });
    if (!applied.ok()) return applied;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status EnsurePostgresSchema(PgConnection& conn) {
  DENIABLE_RETURN_IF_ERROR(
      conn.Exec("SELECT pg_advisory_lock($1)", {absl::StrCat(kSchemaLockKey)}).status());
  const absl::Status s = Migrate(conn);
  (void)conn.Exec("SELECT pg_advisory_unlock($1)", {absl::StrCat(kSchemaLockKey)});
  return s;
}

std::string PartitionName(int64_t day) {
  return absl::StrCat("reports_",
                      absl::FormatTime("%Y%m%d", absl::FromUnixSeconds(day * kPartitionSeconds),
                                       absl::UTCTimeZone()));
}

absl::Status EnsurePartition(PgConnection& conn, int64_t day) {
  return conn.Transaction([&]() -> absl::Status {
    DENIABLE_RETURN_IF_ERROR(
        conn.Exec("SELECT pg_advisory_xact_lock($1)", {absl::StrCat(kPartitionLockKey)}).status());
    return conn
        .Exec(absl::StrCat("CREATE TABLE IF NOT EXISTS ", PartitionName(day),
                           " PARTITION OF reports FOR VALUES FROM (", day * kPartitionSeconds,
                           ") TO (", (day + 1) * kPartitionSeconds, ")"))
        .status();
  });
}

}  // namespace deniable::server
