"""Writes the frozen collector databases of one schema version, and the figures they serve.

    make_counts_fixture.py SERVER_BIN CLI_BIN OUT_PREFIX

Run with the binaries of the release whose schema is to be frozen (tests/data/README.md). It
starts that collector on a new SQLite database and replays the first 150 respondents of the
Chile survey (tests/data/chile-plebiscite-1988.csv) through its SDK into one metric of every
kind: yes/no (a survey with a region label, and a daily metric spread over 7 days so that
window firsts are counted), categorical (k-RR and OUE, daily, spread over 7 days) and numeric
(1BitMean age, dBitFlip income histogram). It then migrates that database into a new PostgreSQL
database with the same release's `deniable-server migrate`, so both hold the same reports, and
writes:
  OUT_PREFIX-sqlite.sql     the SQLite database (application_id, user_version, then .dump);
  OUT_PREFIX-postgres.sql   the PostgreSQL database (pg_dump --no-owner);
  OUT_PREFIX-figures.json   what the release's CLI printed (`prevalence --json`) for each query
                            of QUERIES, the figures a newer collector must serve from both.
tests/counts_migration_test.py opens both with today's collector and compares.
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import postgres  # noqa: E402
from test_server import start_server  # noqa: E402

LN3 = "1.0986122886681098"
# (name, create-metric flags or None for replay's survey default, replay flags)
METRICS = [
    ("vote_yes", None, ["--column=vote", "--yes=Y", "--label_columns=region"]),
    ("daily_yes", ["--design=two_coin"], ["--column=vote", "--yes=Y", "--spread=7d"]),
    ("vote_krr", ["--categories=Y,N,U,A", "--design=k_rr", f"--epsilon={LN3}"],
     ["--column=vote", "--spread=7d"]),
    ("vote_oue", ["--categories=Y,N,U,A", "--design=oue", f"--epsilon={LN3}"],
     ["--column=vote", "--spread=7d"]),
    ("age", ["--range=18,90", "--unit=years", f"--epsilon={LN3}", "--reporting_period=once"],
     ["--value_column=age", "--blank=skip"]),
    ("income_histogram", ["--range=0,200000", "--unit=pesos", "--mechanism=d_bit_flip",
                          "--bucket_edges=0,5000,10000,25000,50000,100000,150000,200000",
                          f"--epsilon={LN3}", "--reporting_period=once"],
     ["--value_column=income", "--blank=skip"]),
]
# Fixed ranges, so that the figures do not depend on when they are asked.
RANGE = ["--start=1", "--end=2000000000"]
QUERIES = [
    ["--metric=vote_yes"],
    ["--metric=vote_yes", "--group_by=region"],
    ["--metric=daily_yes"],
    ["--metric=vote_krr"],
    ["--metric=vote_oue"],
    ["--metric=age"],
    ["--metric=income_histogram", "--quantiles=0.5,0.9"],
]


def run(argv):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise SystemExit(f"{argv}: {r.stderr}")
    return r.stdout


def figures(cli, target):
    out = {}
    for q in QUERIES:
        out[" ".join(q)] = json.loads(run([cli, f"--target={target}", "--json", "prevalence",
                                           *q, *RANGE]))
    return out


def main():
    server_bin, cli, prefix = sys.argv[1:4]
    work = tempfile.mkdtemp(prefix="deniable-fixture-")
    csv = os.path.join(os.path.dirname(os.path.abspath(__file__)), "chile-plebiscite-1988.csv")
    subset = os.path.join(work, "subset.csv")
    with open(csv) as f, open(subset, "w") as out:
        out.writelines(f.readlines()[:151])
    db_file = os.path.join(work, "collector.db")
    server, target = start_server(server_bin, db_file, f"{work}/server.log")
    try:
        for name, create, replay in METRICS:
            if create is not None:
                run([cli, f"--target={target}", "create-metric", f"--name={name}", *create])
            run([cli, f"--target={target}", "replay", f"--metric={name}", f"--csv={subset}",
                 *replay])
        want = figures(cli, target)
    finally:
        server.terminate()
        server.wait(timeout=30)
    with open(f"{prefix}-figures.json", "w") as f:
        json.dump(want, f, indent=1, sort_keys=True)
        f.write("\n")
    with sqlite3.connect(db_file) as c:
        app_id = c.execute("PRAGMA application_id").fetchone()[0]
        version = c.execute("PRAGMA user_version").fetchone()[0]
        lines = list(c.iterdump())
    with open(f"{prefix}-sqlite.sql", "w") as f:
        f.write(f"PRAGMA application_id={app_id};\nPRAGMA user_version={version};\n")
        f.write("\n".join(lines) + "\n")
    with postgres.TestPostgres() as pg:
        uri = pg.new_database()
        run([server_bin, "migrate", f"--from={db_file}", f"--to={uri}"])
        dump = subprocess.run(pg._as_user + [
            "pg_dump", "-h", pg.dir, "-p", str(pg.port), "-U", "postgres", "--no-owner",
            "--no-privileges", uri.rsplit("/", 1)[1]], check=True, capture_output=True,
            text=True).stdout
    with open(f"{prefix}-postgres.sql", "w") as f:
        f.write(dump)


if __name__ == "__main__":
    main()
