"""The device file: memo table, report queue, ledger, counters, cached designs (SQLite).

The same tables as the C++ SQLite device store (docs/sdk.md "What leaves the device"): the memo
table maps (metric, design version, true value) to the randomized bit, category_memo maps
(metric, design version, true category index) to the randomized CategoricalReport (serialized),
numeric_memo (metric, design version, level) to the randomized answer of a numeric metric (a
Report with only `bit` or `numeric` set, serialized); all three are sensitive, and so is
numeric_alpha (metric -> the device's alpha of alpha-point rounding). The queue holds only
randomized reports. Heavy-hitters metrics (format 5): hh_group maps (metric, design version) to
the device's group, drawn once; hh_memo maps (metric, design version, value key) to the
randomized answer (a Report with `bit` and `heavy_hitters`, serialized), where the value key is
HMAC-SHA256 of the value under this file's memo_key (32 random bytes drawn once from os.urandom,
kept in deniable_py_meta), so the file never holds a value in clear. A file written before
category_memo existed (format 1) gains the table when opened (format 2); format 4 adds
numeric_memo and numeric_alpha, format 5 hh_group and hh_memo the same way; nothing else
changes.
The file is created with mode 0600. Each method is one transaction. Thread-safe (one connection
behind a lock); one process per file.
"""
import hashlib
import hmac
import os
import sqlite3
import threading

SCHEMA = """
CREATE TABLE IF NOT EXISTS deniable_py_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memo (metric TEXT NOT NULL, version INTEGER NOT NULL,
  value INTEGER NOT NULL, bit INTEGER NOT NULL, PRIMARY KEY (metric, version, value));
CREATE TABLE IF NOT EXISTS category_memo (metric TEXT NOT NULL, version INTEGER NOT NULL,
  category INTEGER NOT NULL, report BLOB NOT NULL, PRIMARY KEY (metric, version, category));
CREATE TABLE IF NOT EXISTS numeric_memo (metric TEXT NOT NULL, version INTEGER NOT NULL,
  level INTEGER NOT NULL, report BLOB NOT NULL, PRIMARY KEY (metric, version, level));
CREATE TABLE IF NOT EXISTS numeric_alpha (metric TEXT PRIMARY KEY, alpha REAL NOT NULL);
CREATE TABLE IF NOT EXISTS hh_group (metric TEXT NOT NULL, version INTEGER NOT NULL,
  grp INTEGER NOT NULL, PRIMARY KEY (metric, version));
CREATE TABLE IF NOT EXISTS hh_memo (metric TEXT NOT NULL, version INTEGER NOT NULL,
  value_key BLOB NOT NULL, report BLOB NOT NULL, PRIMARY KEY (metric, version, value_key));
CREATE TABLE IF NOT EXISTS queue (sequence INTEGER PRIMARY KEY AUTOINCREMENT,
  metric TEXT NOT NULL, report BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS ledger (metric TEXT PRIMARY KEY,
  reports_accepted INTEGER NOT NULL DEFAULT 0, reports_acknowledged INTEGER NOT NULL DEFAULT 0,
  randomizations INTEGER NOT NULL DEFAULT 0, epsilon_spent REAL NOT NULL DEFAULT 0,
  epsilon_if_fresh REAL NOT NULL DEFAULT 0, period_start_seconds INTEGER NOT NULL DEFAULT 0,
  reports_this_period INTEGER NOT NULL DEFAULT 0,
  reports_repeated_in_period INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS designs (metric TEXT PRIMARY KEY, response BLOB NOT NULL);
"""
COUNTERS = ("acknowledged", "duplicates", "dropped_rejected", "dropped_queue_full",
            "dropped_too_old", "dropped_design_mismatch", "values_clipped")
LEDGER_FIELDS = ("reports_accepted", "reports_acknowledged", "randomizations", "epsilon_spent",
                 "epsilon_if_fresh", "period_start_seconds", "reports_this_period",
                 "reports_repeated_in_period", "last_report_seconds", "values_clipped")


class DeviceStore:
    """path None or ":memory:": in memory (tests, simulations)."""

    def __init__(self, path=None, sync_every_report=True):
        self._lock = threading.Lock()
        if path in (None, "", ":memory:"):
            self._db = sqlite3.connect(":memory:", check_same_thread=False,
                                       isolation_level=None)
        else:
            if not os.path.exists(path):
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None,
                                       timeout=10)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={'FULL' if sync_every_report else 'NORMAL'}")
        with self._lock:
            self._db.executescript(SCHEMA)
            # Format 3: the event time of each metric's last queued report (window flags); a
            # store written before gets 0 (its next report is first in every window).
            columns = [r[1] for r in self._db.execute("PRAGMA table_info(ledger)")]
            if "last_report_seconds" not in columns:
                self._db.execute("ALTER TABLE ledger ADD COLUMN last_report_seconds INTEGER "
                                 "NOT NULL DEFAULT 0")
            # Format 4: numeric metrics' clipped values per metric (and numeric_memo,
            # numeric_alpha above).
            if "values_clipped" not in columns:
                self._db.execute("ALTER TABLE ledger ADD COLUMN values_clipped INTEGER "
                                 "NOT NULL DEFAULT 0")
            self._db.execute("INSERT OR REPLACE INTO deniable_py_meta VALUES ('format', '5')")
            self._db.execute("INSERT OR IGNORE INTO deniable_py_meta VALUES ('memo_key', ?)",
                             (os.urandom(32).hex(),))
            (key,) = self._db.execute("SELECT value FROM deniable_py_meta WHERE key = "
                                      "'memo_key'").fetchone()
            self._memo_key = bytes.fromhex(key)

    def close(self):
        with self._lock:
            self._db.close()

    def _tx(self):
        return _Transaction(self._db, self._lock)

    def lookup_memo(self, metric, version, value):
        with self._tx() as db:
            row = db.execute("SELECT bit FROM memo WHERE metric=? AND version=? AND value=?",
                             (metric, version, int(value))).fetchone()
        return None if row is None else row[0]

    def lookup_category_memo(self, metric, version, category):
        """The serialized CategoricalReport memoized for the true category index, or None."""
        with self._tx() as db:
            row = db.execute("SELECT report FROM category_memo WHERE metric=? AND version=? AND"
                             " category=?", (metric, version, int(category))).fetchone()
        return None if row is None else row[0]

    def lookup_numeric_memo(self, metric, version, level):
        """The serialized answer (a Report with bit or numeric) memoized for `level`, or None."""
        with self._tx() as db:
            row = db.execute("SELECT report FROM numeric_memo WHERE metric=? AND version=? AND"
                             " level=?", (metric, version, int(level))).fetchone()
        return None if row is None else bytes(row[0])

    def value_key(self, value):
        """The memo key of a heavy-hitters value (bytes): HMAC-SHA256 under the file's
        memo_key, so the value itself is never stored."""
        return hmac.new(self._memo_key, value, hashlib.sha256).digest()

    def lookup_hh_memo(self, metric, version, value_key):
        """The serialized answer memoized for the value with this key (value_key()), or
        None."""
        with self._tx() as db:
            row = db.execute("SELECT report FROM hh_memo WHERE metric=? AND version=? AND"
                             " value_key=?", (metric, version, value_key)).fetchone()
        return None if row is None else bytes(row[0])

    def hh_group(self, metric, version, draw):
        """The device's heavy-hitters group for (metric, design version): the stored one, else
        draw() stored in the same transaction (drawn once, kept for good)."""
        with self._tx() as db:
            row = db.execute("SELECT grp FROM hh_group WHERE metric = ? AND version = ?",
                             (metric, version)).fetchone()
            if row is not None:
                return row[0]
            group = int(draw())
            db.execute("INSERT INTO hh_group VALUES (?, ?, ?)", (metric, version, group))
            return group

    def numeric_alpha(self, metric, draw):
        """The device's alpha for `metric`: the stored one, else draw() stored in the same
        transaction (drawn once per device and metric, kept for good)."""
        with self._tx() as db:
            row = db.execute("SELECT alpha FROM numeric_alpha WHERE metric = ?",
                             (metric,)).fetchone()
            if row is not None:
                return row[0]
            alpha = float(draw())
            db.execute("INSERT INTO numeric_alpha VALUES (?, ?)", (metric, alpha))
            return alpha

    def ledger(self):
        with self._tx() as db:
            rows = db.execute(f"SELECT metric, {', '.join(LEDGER_FIELDS)} FROM ledger").fetchall()
        return {r[0]: dict(zip(LEDGER_FIELDS, r[1:])) for r in rows}

    def commit_report(self, metric, report_bytes, *, memo, randomized, epsilon, period_start,
                      max_queued, report_time=0, clipped=False):
        """One transaction: the report queued, the memo entry (("bit", version, value, bit),
        ("category", version, index, report bytes), ("numeric", version, level, answer
        bytes) or ("heavy_hitters", version, value key, answer bytes)), the ledger, values_clipped when `clipped`; evicts the oldest reports beyond
        max_queued (counted). Returns how many were evicted."""
        with self._tx() as db:
            db.execute("INSERT OR IGNORE INTO ledger(metric) VALUES (?)", (metric,))
            if clipped:
                _add_counter(db, "values_clipped", 1)
                db.execute("UPDATE ledger SET values_clipped = values_clipped + 1"
                           " WHERE metric = ?", (metric,))
            if memo is not None:
                table = {"category": "category_memo", "numeric": "numeric_memo",
                         "heavy_hitters": "hh_memo"}.get(memo[0], "memo")
                db.execute(f"INSERT OR REPLACE INTO {table} VALUES (?, ?, ?, ?)",
                           (metric, *memo[1:]))
            db.execute("INSERT INTO queue(metric, report) VALUES (?, ?)", (metric, report_bytes))
            db.execute(
                "UPDATE ledger SET reports_accepted = reports_accepted + 1,"
                " randomizations = randomizations + ?, epsilon_spent = epsilon_spent + ?,"
                " epsilon_if_fresh = epsilon_if_fresh + ?,"
                " reports_this_period = CASE WHEN period_start_seconds = ?"
                "   THEN reports_this_period + 1 ELSE 1 END,"
                " period_start_seconds = ?, last_report_seconds = ? WHERE metric = ?",
                (1 if randomized else 0, epsilon if randomized else 0.0, epsilon, period_start,
                 period_start, report_time, metric))
            (size,) = db.execute("SELECT COUNT(*) FROM queue").fetchone()
            evicted = max(0, size - max_queued)
            if evicted:
                db.execute("DELETE FROM queue WHERE sequence IN (SELECT sequence FROM queue"
                           " ORDER BY sequence LIMIT ?)", (evicted,))
                _add_counter(db, "dropped_queue_full", evicted)
        return evicted

    def count_repeated(self, metric):
        with self._tx() as db:
            db.execute("INSERT OR IGNORE INTO ledger(metric) VALUES (?)", (metric,))
            db.execute("UPDATE ledger SET reports_repeated_in_period ="
                       " reports_repeated_in_period + 1 WHERE metric = ?", (metric,))

    def peek_oldest(self, limit):
        """[(sequence, metric, report_bytes)], oldest first."""
        with self._tx() as db:
            return db.execute("SELECT sequence, metric, report FROM queue ORDER BY sequence"
                              " LIMIT ?", (limit,)).fetchall()

    def remove(self, entries, acknowledged, counters):
        """Deletes the (sequence, metric) entries; acknowledged ones count in the ledger."""
        with self._tx() as db:
            for sequence, metric in entries:
                deleted = db.execute("DELETE FROM queue WHERE sequence = ?",
                                     (sequence,)).rowcount
                if deleted and acknowledged:
                    db.execute("UPDATE ledger SET reports_acknowledged = reports_acknowledged"
                               " + 1 WHERE metric = ?", (metric,))
            for name, value in counters.items():
                _add_counter(db, name, value)

    def queue_size(self):
        with self._tx() as db:
            return db.execute("SELECT COUNT(*) FROM queue").fetchone()[0]

    def counters(self):
        with self._tx() as db:
            rows = dict(db.execute("SELECT name, value FROM counters").fetchall())
        return {name: rows.get(name, 0) for name in COUNTERS}

    def load_design(self, metric):
        with self._tx() as db:
            row = db.execute("SELECT response FROM designs WHERE metric = ?",
                             (metric,)).fetchone()
        return None if row is None else row[0]

    def forget_design(self, metric, version):
        """One transaction: the cached design of `metric` and its memoized bits of `version`
        (the collector has another design under that version). A heavy-hitters group is
        kept: it does not depend on the value and was drawn once."""
        with self._tx() as db:
            db.execute("DELETE FROM designs WHERE metric = ?", (metric,))
            db.execute("DELETE FROM memo WHERE metric = ? AND version = ?", (metric, version))
            db.execute("DELETE FROM category_memo WHERE metric = ? AND version = ?",
                       (metric, version))
            db.execute("DELETE FROM numeric_memo WHERE metric = ? AND version = ?",
                       (metric, version))
            db.execute("DELETE FROM hh_memo WHERE metric = ? AND version = ?",
                       (metric, version))

    def save_design(self, metric, response_bytes):
        with self._tx() as db:
            db.execute("INSERT OR REPLACE INTO designs VALUES (?, ?)", (metric, response_bytes))


def _add_counter(db, name, value):
    db.execute("INSERT INTO counters VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET"
               " value = value + excluded.value", (name, value))


class _Transaction:
    def __init__(self, db, lock):
        self._db, self._lock = db, lock

    def __enter__(self):
        self._lock.acquire()
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._lock.release()
            raise
        return self._db

    def __exit__(self, kind, value, traceback):
        try:
            self._db.execute("COMMIT" if kind is None else "ROLLBACK")
        finally:
            self._lock.release()
