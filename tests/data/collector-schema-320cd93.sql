-- A collector database as written by deniable-server at commit 320cd93 (the last unversioned
-- schema: application_id 0, user_version 0), built from that commit's schema creation SQL
-- (kSchema in server/storage/sqlite_storage.cc, then the two ALTERs of MigrateMetricsTable and
-- TokenStore's auth_tokens table), with a little data. Kept as SQL text, not a binary file:
-- server/storage/sqlite_schema_test.cc runs it into an empty file and opens it with today's code.
CREATE TABLE IF NOT EXISTS metrics(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL,
  created_time_seconds INTEGER NOT NULL,
  time_precision_seconds INTEGER NOT NULL,
  min_reports INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS designs(
  metric_id INTEGER NOT NULL,
  version INTEGER NOT NULL,
  parameters BLOB NOT NULL,
  a REAL NOT NULL,
  b REAL NOT NULL,
  created_time_seconds INTEGER NOT NULL,
  PRIMARY KEY (metric_id, version)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS labelsets(
  id INTEGER PRIMARY KEY,
  canonical TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS reports(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  report_id BLOB NOT NULL,
  version INTEGER NOT NULL,
  bit INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL,
  PRIMARY KEY (metric_id, event_time, report_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS recent_reports(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  report_id BLOB NOT NULL,
  version INTEGER NOT NULL,
  bit INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL,
  PRIMARY KEY (metric_id, event_time, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS moving(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  PRIMARY KEY (metric_id, event_time)) WITHOUT ROWID;
CREATE VIEW IF NOT EXISTS stored_reports AS
  SELECT metric_id, event_time, report_id, version, bit, labelset_id FROM reports
  UNION ALL
  SELECT metric_id, event_time, report_id, version, bit, labelset_id FROM recent_reports;
CREATE TABLE IF NOT EXISTS counts(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  version INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL,
  n INTEGER NOT NULL,
  yes INTEGER NOT NULL,
  PRIMARY KEY (metric_id, event_time, version, labelset_id)) WITHOUT ROWID;
ALTER TABLE metrics ADD COLUMN reporting_period_seconds INTEGER NOT NULL DEFAULT 86400;
ALTER TABLE metrics ADD COLUMN randomization INTEGER NOT NULL DEFAULT 1;
CREATE TABLE IF NOT EXISTS auth_tokens(
  id INTEGER PRIMARY KEY,
  hash BLOB NOT NULL UNIQUE,
  role TEXT NOT NULL,
  label TEXT NOT NULL,
  created_time_seconds INTEGER NOT NULL,
  revoked_time_seconds INTEGER);
-- Data: metric "chile_vote_yes" (two_coin: DesignParameters field 3, empty), 3 reports in one
-- hour, two label sets, the counts maintained with them, and one analyst token (hash only).
INSERT INTO metrics VALUES (1, 'chile_vote_yes', 'will you vote Yes?', 1699996400, 3600, 0, 86400, 1);
INSERT INTO designs VALUES (1, 1, x'1a00', 0.75, 0.25, 1699996400);
INSERT INTO labelsets VALUES (1, 'region=N'), (2, 'region=S');
INSERT INTO reports VALUES
  (1, 1699999200, x'00000000000000000000000000000001', 1, 1, 1),
  (1, 1699999200, x'00000000000000000000000000000002', 1, 0, 1),
  (1, 1699999200, x'00000000000000000000000000000003', 1, 1, 2);
INSERT INTO counts VALUES (1, 1699999200, 1, 1, 2, 1), (1, 1699999200, 1, 2, 1, 1);
INSERT INTO auth_tokens VALUES
  (1, x'0000000000000000000000000000000000000000000000000000000000000001', 'analyst', 'alice',
   1699996400, NULL);
