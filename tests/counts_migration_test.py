"""Old collector databases, migrated by today's collector, serve the figures they served before.

    counts_migration_test.py SERVER_BIN CLI_BIN

tests/data/collector-v6-d15df5a-{sqlite,postgres}.sql are a SQLite and a PostgreSQL database of
schema version 6 (yes/no counts in counts.yes, category support in category_counts, window
firsts keyed by category), written by the collector at commit d15df5a with one metric of every
kind (tests/data/make_counts_fixture.py); -figures.json is what that collector's CLI printed for
each query. Today's collector opens each (migrating it to counter vectors, schema version 7,
and, for SQLite, its keyed reports into a file of their own, version 8)
and must print the same figures, field for field. PostgreSQL runs for real (tests/lib/postgres.py);
the test skips only where it is not installed.
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
sys.path.insert(0, os.path.join(HERE, "data"))
import postgres  # noqa: E402
import stored_reports  # noqa: E402
from checks import check  # noqa: E402
from make_counts_fixture import QUERIES, RANGE  # noqa: E402
from test_server import start_server  # noqa: E402

FIXTURE = os.path.join(HERE, "data", "collector-v6-d15df5a")


def served_figures(server_bin, cli, db, log):
    server, target = start_server(server_bin, db, log)
    try:
        out = {}
        for q in QUERIES:
            r = subprocess.run([cli, f"--target={target}", "--json", "prevalence", *q, *RANGE],
                               capture_output=True, text=True, timeout=60)
            check(r.returncode == 0, f"{q}: {r.stderr}")
            out[" ".join(q)] = json.loads(r.stdout)
        return out
    finally:
        server.terminate()
        server.wait(timeout=30)


# Prevalence.kind (issue 27) is newer than the fixture's figures: yes_no and categorical are
# left out of the comparison once checked to be the metric's kind.
def without_kind(p, kind):
    """`p` (a Prevalence as JSON) without its kind marker, checked to be `kind`; groups too."""
    check(kind in p, f"Prevalence.kind is not {kind}: {sorted(p)}")
    new = kind if kind != "numeric" else None  # numeric kept its number (41) in the oneof
    out = {k: v for k, v in p.items() if k != new}
    # NumericEstimate.estimand (issue 38) is newer still: checked to be the estimand in a
    # number's words (empty when suppressed), then left out.
    if kind == "numeric" and "numeric" in out:
        out["numeric"] = dict(out["numeric"])
        words = out["numeric"].pop("estimand", None)
        mechanism = out["numeric"].get("mechanism")
        noun = "distribution" if mechanism == "d_bit_flip" else "mean"
        check(words == ("" if p.get("suppressed") else
                        p.get("estimand", "").replace("prevalence", noun)),
              f"numeric.estimand {words!r} for estimand {p.get('estimand')!r}")
    # The interval kind and the manipulation bounds (issue 41) are newer still: the interval is
    # checked to be the fixed-n one the fixture's figures are, the bounds left out.
    check(out.pop("intervalKind", "FIXED_N") == "FIXED_N", "a fixed-n interval by default")
    check(int(out.pop("anytimeTunedReports", 0)) == 0, "no confidence sequence by default")
    out.pop("manipulation", None)
    if "numeric" in out:
        out["numeric"] = {k: v for k, v in out["numeric"].items() if k != "meanManipulation"}
        if out["numeric"].get("buckets"):
            out["numeric"]["buckets"] = [{k: v for k, v in b.items() if k != "manipulation"}
                                         for b in out["numeric"]["buckets"]]
    if out.get("shares"):
        out["shares"] = [{k: v for k, v in s.items() if k != "manipulation"} for s in out["shares"]]
    if "groups" in p:
        out["groups"] = [without_kind(g, kind) for g in p["groups"]]
    return out


def compare(backend, got, want):
    check(sorted(got) == sorted(want), f"{backend}: queries {sorted(got)} vs {sorted(want)}")
    for query in got:
        kind = ("numeric" if "numeric" in want[query]
                else "categorical" if want[query].get("shares") else "yesNo")
        got[query] = without_kind(got[query], kind)
    for query, figures in want.items():
        for field, value in figures.items():
            check(got[query].get(field) == value,
                  f"{backend} {query}: {field} is {got[query].get(field)!r}, was {value!r}")
        check(set(got[query]) == set(figures),
              f"{backend} {query}: fields {sorted(set(got[query]) ^ set(figures))} differ")
    print(f"{backend}: {len(want)} queries serve the figures of schema version 6")


def main():
    server_bin, cli = sys.argv[1:3]
    with open(f"{FIXTURE}-figures.json") as f:
        want = json.load(f)
    work = tempfile.mkdtemp(prefix="deniable-counts-migration-")

    db_file = os.path.join(work, "v6.db")
    with open(f"{FIXTURE}-sqlite.sql") as f, sqlite3.connect(db_file) as c:
        c.executescript(f.read())
    with sqlite3.connect(db_file) as c:
        check(c.execute("PRAGMA user_version").fetchone()[0] == 6, "the fixture is version 6")
        support0 = c.execute("SELECT count(*) FROM category_counts WHERE category = 0").fetchone()[0]
        check(support0 > 0, "the fixture has support of category 0 to move")
        ids = sorted(r[0] for r in c.execute(
            "SELECT report_id FROM reports UNION ALL SELECT report_id FROM recent_reports"))
    compare("sqlite", served_figures(server_bin, cli, db_file, f"{work}/sqlite.log"), want)
    with stored_reports.connect(db_file) as c:
        # Version 8 too: the keyed reports moved into their own file (sqlite_keyed_file.h); 9:
        # the pair's generations; 10: counters 1 and up in chunks (counter_chunks.h); 11: the
        # database's generation; 12: the chunks' deltas (counter_deltas, empty after it).
        check(c.execute("PRAGMA main.user_version").fetchone()[0] == 12, "migrated to version 12")
        check(c.execute("SELECT count(*) FROM sqlite_master WHERE name = 'counter_sums'")
              .fetchone()[0] == 0, "counter_sums became counter_chunks")
        check(c.execute("SELECT count(*) FROM counter_chunks").fetchone()[0] > 0,
              "the categories' support is in counter_chunks")
        check(c.execute("SELECT count(*) FROM first_counts WHERE counter >= 1").fetchone()[0] == 0,
              "first_counts keeps n and counter 0 only")
        check(sorted(r[0] for r in c.execute("SELECT report_id FROM stored_reports")) == ids,
              "every report of the fixture is stored once, in one of the two files")
        check(c.execute("SELECT count(*) FROM sqlite_master WHERE name = 'legacy_reports'")
              .fetchone()[0] == 0, "the copied legacy_reports table is dropped")

    try:
        pg = postgres.TestPostgres()
    except postgres.SkipTest as e:
        print(e)
        return 0
    try:
        uri = pg.new_database()
        db = uri.rsplit("/", 1)[1]
        subprocess.run(pg._as_user + ["psql", "-h", pg.dir, "-p", str(pg.port), "-U", "postgres",
                                      "-d", db, "-Xq", "-v", "ON_ERROR_STOP=1"],
                       input=open(f"{FIXTURE}-postgres.sql").read(), check=True,
                       capture_output=True, text=True)
        check(pg.sql(db, "SELECT max(version) FROM schema_version") == "6", "PostgreSQL fixture v6")
        compare("postgres", served_figures(server_bin, cli, uri, f"{work}/pg.log"), want)
        check(pg.sql(db, "SELECT max(version) FROM schema_version") == "9", "migrated to 9")
        check(pg.sql(db, "SELECT count(*) FROM counter_chunks WHERE win = -1 AND chunk = 0 "
                         "AND 0 = ANY(offsets)") == "0",
              "counter 0 lives in counts.counter0")
        check(pg.sql(db, "SELECT count(*) FROM pg_class WHERE relname = 'counter_sums'") == "0",
              "counter_sums became counter_chunks")
        check(pg.sql(db, "SELECT count(*) FROM first_counts WHERE counter >= 1") == "0",
              "first_counts keeps n and counter 0 only")
    finally:
        pg.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
