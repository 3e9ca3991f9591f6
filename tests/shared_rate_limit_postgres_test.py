"""A token's rate limit holds over two collectors on one PostgreSQL together.

    shared_rate_limit_postgres_test.py SERVER_BIN [SECONDS]

Starts a real PostgreSQL (tests/lib/postgres.py), adds an analyst and a reporter token, and starts
two deniable-server processes on the database with --rate_limit_reports_per_second=RATE and
--rate_limit_burst=BURST. Four client threads (two per collector, HTTP/JSON API) submit batches
of 10 reports with the reporter token as fast as the collectors answer, for SECONDS. The bucket
starts full and refills at RATE, so whatever the interleaving, over the whole run (wall time W,
measured around every call) the reports acknowledged by both collectors together are at most
BURST + RATE * W, and at least BURST (the first calls find the bucket full). With a limit kept in
each process the two collectors would acknowledge about twice that. Every acknowledged report
must also be stored and counted once. Skips (exit 0 with a message) only when PostgreSQL is not
installed.
"""
import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import postgres  # noqa: E402
import test_server  # noqa: E402
from checks import check  # noqa: E402

RATE = 100.0
BURST = 100.0
BATCH = 10


def start_collector(server_bin, uri, log_path):
    proc, _, http = test_server.start_collector(server_bin, uri, log_path,
                                                f"--rate_limit_reports_per_second={RATE}",
                                                f"--rate_limit_burst={BURST}")
    return proc, http


def post(http, method, body, token):
    req = urllib.request.Request(f"{http}/v1/{method}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json",
                                          "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


def add_token(server_bin, uri, role):
    out = subprocess.run([server_bin, "tokens", "add", f"--role={role}", "--label=test",
                          f"--db={uri}"], check=True, capture_output=True, text=True)
    return out.stdout.strip()


def main():
    server_bin = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 3
    try:
        pg = postgres.TestPostgres()
    except postgres.SkipTest as e:
        print(e)
        return 0
    work = tempfile.mkdtemp(prefix="deniable-ratelimit-")
    collectors = []
    try:
        uri = pg.new_database()
        db = uri.rsplit("/", 1)[1]
        analyst = add_token(server_bin, uri, "analyst")
        reporter = add_token(server_bin, uri, "reporter")
        for i in range(2):
            collectors.append(start_collector(server_bin, uri, f"{work}/c{i + 1}.log"))
        status, body = post(collectors[0][1], "QueryService/CreateMetric",
                            {"name": "limited", "design": {"twoCoin": {}}}, analyst)
        check(status == 200, f"CreateMetric: {status} {body}")

        now = int(time.time())
        hour = now - now % 3600
        lock = threading.Lock()
        acknowledged, refused, other = [], [0], []
        counter = [0]

        def client(http):
            while time.monotonic() < deadline:
                with lock:
                    first = counter[0]
                    counter[0] += BATCH
                ids = [(first + i).to_bytes(16, "big") for i in range(BATCH)]
                reports = [{"metric": "limited", "designVersion": 1, "bit": (first + i) % 2,
                            "reportId": base64.b64encode(r).decode(), "eventTimeSeconds": str(hour)}
                           for i, r in enumerate(ids)]
                status, body = post(http, "ReportService/SubmitReports", {"reports": reports},
                                    reporter)
                with lock:
                    if status == 200:
                        acknowledged.extend(r.hex() for r in ids)
                    elif status == 429:
                        refused[0] += 1
                    else:
                        other.append((status, body))

        threads = [threading.Thread(target=client, args=(c[1],)) for c in collectors * 2]
        begin = time.monotonic()
        deadline = begin + seconds
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - begin

        bound = BURST + RATE * wall
        stored = set(pg.sql(db, "SELECT replace(report_id::text, '-', '') FROM reports").split())
        n = int(pg.sql(db, "SELECT coalesce(sum(n), 0) FROM counts"))
        print(f"two collectors, limit {RATE:g} reports/s burst {BURST:g}: acknowledged "
              f"{len(acknowledged)} reports in {wall:.2f} s (bound {bound:.0f}; a limit per "
              f"process would allow about {2 * bound:.0f}), {refused[0]} calls refused with 429, "
              f"stored {len(stored)}, counted {n}")
        check(not other, f"unexpected answers: {other[:3]}")
        check(refused[0] > 0, "the clients never reached the limit: the test proves nothing")
        check(len(acknowledged) <= bound, (
            f"{len(acknowledged)} reports acknowledged > burst + rate * time = {bound:.0f}: the "
            "limit is not shared by the collectors"))
        check(len(acknowledged) >= BURST, f"only {len(acknowledged)} acknowledged, < burst")
        missing = set(acknowledged) - stored
        check(not missing, f"{len(missing)} acknowledged reports are not stored")
        check(n == len(stored), f"counts n={n} but {len(stored)} stored reports")
        print("PASS")
        return 0
    finally:
        for proc, _ in collectors:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        pg.close()


if __name__ == "__main__":
    sys.exit(main())
