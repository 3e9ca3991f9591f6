-- A collector database of schema version 2 as written by deniable-server at commit 5434860 (the
-- last release before retention and AUTOINCREMENT metric ids): collector-schema-v1-c83eab3.sql
-- migrated with that commit's MigrateTo2 (kSchema2 in server/storage/sqlite_schema.cc) and
-- user_version 2, plus a categorical metric (id 2, categories Y,N,U,A) with two reports still in
-- recent_reports (support bitmaps {1} and {1,3}) and their counts and category_counts, as that
-- release appends them. Dumped with sqlite3's .dump. server/storage/sqlite_schema_test.cc runs it
-- into an empty file and opens it with today's code (migration to version 3).
PRAGMA application_id=1145983793;
PRAGMA user_version=2;
BEGIN TRANSACTION;
CREATE TABLE metrics(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL,
  created_time_seconds INTEGER NOT NULL,
  time_precision_seconds INTEGER NOT NULL,
  min_reports INTEGER NOT NULL DEFAULT 0, reporting_period_seconds INTEGER NOT NULL DEFAULT 86400, randomization INTEGER NOT NULL DEFAULT 1, categories TEXT NOT NULL DEFAULT '');
INSERT INTO metrics VALUES(1,'chile_vote_yes','will you vote Yes?',1699996400,3600,0,86400,1,'');
INSERT INTO metrics VALUES(2,'chile_vote','how will you vote?',1699996400,3600,0,86400,1,'Y,N,U,A');
CREATE TABLE designs(
  metric_id INTEGER NOT NULL,
  version INTEGER NOT NULL,
  parameters BLOB NOT NULL,
  a REAL NOT NULL,
  b REAL NOT NULL,
  created_time_seconds INTEGER NOT NULL,
  PRIMARY KEY (metric_id, version)) WITHOUT ROWID;
INSERT INTO designs VALUES(1,1,X'1a00',0.75,0.25,1699996400);
INSERT INTO designs VALUES(2,1,X'1a00',0.59999999999999997779,0.2000000000000000111,1699996400);
CREATE TABLE labelsets(
  id INTEGER PRIMARY KEY,
  canonical TEXT NOT NULL UNIQUE);
INSERT INTO labelsets VALUES(1,'region=N');
INSERT INTO labelsets VALUES(2,'region=S');
CREATE TABLE reports(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  report_id BLOB NOT NULL,
  version INTEGER NOT NULL,
  bit INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL, support BLOB,
  PRIMARY KEY (metric_id, event_time, report_id)) WITHOUT ROWID;
INSERT INTO reports VALUES(1,1699999200,X'00000000000000000000000000000001',1,1,1,NULL);
INSERT INTO reports VALUES(1,1699999200,X'00000000000000000000000000000002',1,0,1,NULL);
INSERT INTO reports VALUES(1,1699999200,X'00000000000000000000000000000003',1,1,2,NULL);
CREATE TABLE recent_reports(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  report_id BLOB NOT NULL,
  version INTEGER NOT NULL,
  bit INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL, support BLOB,
  PRIMARY KEY (metric_id, event_time, seq)) WITHOUT ROWID;
INSERT INTO recent_reports VALUES(1,1700002800,1,X'0102030405060708090a0b0c0d0e0f10',1,0,1,NULL);
INSERT INTO recent_reports VALUES(1,1700002800,2,X'1102030405060708090a0b0c0d0e0f10',1,1,1,NULL);
INSERT INTO recent_reports VALUES(2,1700002800,3,X'21000000000000000000000000000000',1,0,1,X'02');
INSERT INTO recent_reports VALUES(2,1700002800,4,X'22000000000000000000000000000000',1,0,1,X'0a');
CREATE TABLE moving(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  PRIMARY KEY (metric_id, event_time)) WITHOUT ROWID;
CREATE TABLE counts(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  version INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL,
  n INTEGER NOT NULL,
  yes INTEGER NOT NULL,
  PRIMARY KEY (metric_id, event_time, version, labelset_id)) WITHOUT ROWID;
INSERT INTO counts VALUES(1,1699999200,1,1,2,1);
INSERT INTO counts VALUES(1,1699999200,1,2,1,1);
INSERT INTO counts VALUES(1,1700002800,1,1,2,1);
INSERT INTO counts VALUES(2,1700002800,1,1,2,0);
CREATE TABLE auth_tokens(
  id INTEGER PRIMARY KEY,
  hash BLOB NOT NULL UNIQUE,
  role TEXT NOT NULL,
  label TEXT NOT NULL,
  created_time_seconds INTEGER NOT NULL,
  revoked_time_seconds INTEGER);
INSERT INTO auth_tokens VALUES(1,X'0000000000000000000000000000000000000000000000000000000000000001','analyst','alice',1699996400,NULL);
CREATE TABLE category_counts(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  version INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL,
  category INTEGER NOT NULL,
  support INTEGER NOT NULL,
  PRIMARY KEY (metric_id, event_time, version, labelset_id, category)) WITHOUT ROWID;
INSERT INTO category_counts VALUES(2,1700002800,1,1,1,2);
INSERT INTO category_counts VALUES(2,1700002800,1,1,3,1);
CREATE VIEW stored_reports AS
  SELECT metric_id, event_time, report_id, version, bit, labelset_id, support FROM reports
  UNION ALL
  SELECT metric_id, event_time, report_id, version, bit, labelset_id, support FROM recent_reports;
COMMIT;
