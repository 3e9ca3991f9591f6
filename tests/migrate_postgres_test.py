"""`deniable-server migrate` copies a SQLite database into PostgreSQL, idempotently, and verifies.

    migrate_postgres_test.py SERVER_BIN SUBMIT_DRIVER_BIN CLI_BIN

Fills a SQLite database through the real collector (a metric with two design versions, a
second metric with labels, tokens, reports from the submit driver), migrates it into a real
PostgreSQL (tests/lib/postgres.py), checks progress on stderr, the copied metrics, tokens and
report ids, and equal counts; a second run copies nothing and verifies again; a collector then
serves the migrated data from PostgreSQL. Skips only when PostgreSQL is not installed.
"""
import os
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import postgres  # noqa: E402
import stored_reports  # noqa: E402
from test_server import start_server  # noqa: E402
from checks import check, eventually  # noqa: E402


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, **kw)


def main():
    server_bin, driver_bin, cli_bin = sys.argv[1:4]
    try:
        pg = postgres.TestPostgres()
    except postgres.SkipTest as e:
        print(e)
        return 0
    work = tempfile.mkdtemp(prefix="deniable-migrate-")
    db_file = os.path.join(work, "source.db")
    try:
        # The source: a collector on SQLite, fed by the driver, plus a metric with labels.
        server, target = start_server(server_bin, db_file, f"{work}/server.log")
        acked_path = os.path.join(work, "acked")
        with open(acked_path, "w") as acked:  # the driver writes one line per acknowledged report
            driver = subprocess.Popen([driver_bin, target, "3"], stdout=acked,
                                      stderr=subprocess.DEVNULL)

        def acknowledged():
            with open(acked_path) as f:
                return sum(1 for _ in f)
        eventually(lambda: acknowledged() > 1000, 60, "the driver's first 1000 reports acknowledged")
        driver.send_signal(signal.SIGTERM)
        driver.wait()
        r = run([cli_bin, f"--target={target}", "add-version", "--metric=kill",
                 "--design=symmetric_epsilon", "--epsilon=0.5"])
        check(r.returncode == 0, r.stderr)
        r = run([cli_bin, f"--target={target}", "create-metric", "--name=labelled",
                 "--design=two_coin"])
        check(r.returncode == 0, r.stderr)
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        for role in ("reporter", "analyst"):
            r = run([server_bin, "tokens", "add", f"--role={role}", f"--db={db_file}"])
            check(r.returncode == 0, r.stderr)
        with stored_reports.connect(db_file) as c:
            sqlite_reports = c.execute("SELECT count(*) FROM stored_reports").fetchone()[0]
            sqlite_n, sqlite_yes = c.execute("SELECT sum(n), sum(counter0) FROM counts").fetchone()
        check(sqlite_reports > 1000, sqlite_reports)

        uri = pg.new_database()
        db = uri.rsplit("/", 1)[1]
        first = run([server_bin, "migrate", f"--from={db_file}", f"--to={uri}"])
        check(first.returncode == 0, first.stderr)
        check("migrate: reports" in first.stderr and "verified" in first.stderr, first.stderr)
        print(first.stdout.strip())
        check(f"reports {sqlite_reports} (copied {sqlite_reports})" in first.stdout, first.stdout)
        check("tokens 2 (copied 2)" in first.stdout, first.stdout)
        check("metrics 2 (created 2, versions added 1)" in first.stdout, first.stdout)

        pg_reports = int(pg.sql(db, "SELECT count(*) FROM reports"))
        pg_n, pg_yes = map(int, pg.sql(db, "SELECT sum(n), sum(counter0) FROM counts").split("|"))
        check((pg_reports, pg_n, pg_yes) == (sqlite_reports, sqlite_n, sqlite_yes), \
            (pg_reports, pg_n, pg_yes, sqlite_reports, sqlite_n, sqlite_yes))
        with stored_reports.connect(db_file) as c:
            want_ids = sorted(row[0].hex() for row in c.execute("SELECT report_id FROM stored_reports"))
        got_ids = sorted(pg.sql(db, "SELECT replace(report_id::text, '-', '') FROM reports").split())
        check(got_ids == want_ids, "report ids differ")
        check(pg.sql(db, "SELECT max(version) FROM designs") == "2")

        second = run([server_bin, "migrate", f"--from={db_file}", f"--to={uri}"])
        check(second.returncode == 0, second.stderr)
        check(f"reports {sqlite_reports} (copied 0)" in second.stdout, second.stdout)
        check("tokens 2 (copied 0)" in second.stdout and "created 0" in second.stdout, second.stdout)
        check(int(pg.sql(db, "SELECT sum(n) FROM counts")) == sqlite_n)

        # Tokens and metrics now come from PostgreSQL.
        listed = run([server_bin, "tokens", "list", f"--db={uri}"])
        check(listed.returncode == 0 and listed.stdout.count("\n") == 3, listed)
        # Refused while a collector holds the SQLite database.
        server, target = start_server(server_bin, db_file, f"{work}/server2.log")
        busy = run([server_bin, "migrate", f"--from={db_file}", f"--to={uri}"])
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        check(busy.returncode == 1 and "in use" in busy.stderr, busy)
        print(f"migrated {sqlite_reports} reports, counts n={pg_n} yes={pg_yes} equal; "
              "second run copied nothing")
        print("PASS")
        return 0
    finally:
        pg.close()


if __name__ == "__main__":
    sys.exit(main())
