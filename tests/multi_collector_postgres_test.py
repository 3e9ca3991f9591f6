"""Three collectors on one PostgreSQL count every acknowledged report exactly once.

    multi_collector_postgres_test.py SERVER_BIN SUBMIT_DRIVER_BIN [SECONDS]

Starts a real PostgreSQL (tests/lib/postgres.py) and three deniable-server processes on it.
Drivers (tests/durability/submit_driver.cc) submit batches with the SAME report ids to different
collectors at once (runs 7 and 8, each sent to two or three collectors), so most reports reach
several collectors concurrently. Mid-load collector 3 is SIGKILLed and restarted, and its driver
re-sends its run from the start to the new process. Then:
  - every acknowledged report id is stored;
  - counts (summed over the collectors' shards) == distinct stored reports, also for "yes" bits;
  - a design version added through collector 1 is served by collector 2's GetDesign within the
    documented bound (--metric_cache_seconds).
Prints the figures. Skips (exit 0 with a message) only when PostgreSQL is not installed.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import postgres  # noqa: E402
import test_server  # noqa: E402
from checks import check  # noqa: E402

CACHE_SECONDS = 2


def start_collector(server_bin, uri, log_path):
    return test_server.start_collector(server_bin, uri, log_path,
                                       f"--metric_cache_seconds={CACHE_SECONDS}")


def post(http, method, body):
    req = urllib.request.Request(f"{http}/v1/{method}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read())


def start_driver(driver_bin, target, run, out_dir, name):
    out = open(os.path.join(out_dir, f"{name}.ids"), "w")
    err = open(os.path.join(out_dir, f"{name}.err"), "w")
    return subprocess.Popen([driver_bin, target, str(run)], stdout=out, stderr=err), out.name


def main():
    server_bin, driver_bin = sys.argv[1], sys.argv[2]
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 6
    try:
        pg = postgres.TestPostgres()
    except postgres.SkipTest as e:
        print(e)
        return 0
    work = tempfile.mkdtemp(prefix="deniable-multi-")
    collectors, drivers = [], []
    try:
        uri = pg.new_database()
        db = uri.rsplit("/", 1)[1]
        for i in range(3):
            collectors.append(start_collector(server_bin, uri, f"{work}/c{i + 1}.log"))
        targets = [c[1] for c in collectors]
        id_files = []
        # Run 7 to all three collectors, run 8 to collectors 1 and 2: the same ids in flight at
        # several collectors at once.
        for name, target, run in [("d1", targets[0], 7), ("d2", targets[1], 7),
                                  ("d3", targets[2], 7), ("d4", targets[0], 8),
                                  ("d5", targets[1], 8)]:
            proc, path = start_driver(driver_bin, target, run, work, name)
            drivers.append(proc)
            id_files.append(path)
        time.sleep(seconds / 2)
        # SIGKILL collector 3 mid-load; its driver ends when the collector stops answering.
        collectors[2][0].send_signal(signal.SIGKILL)
        collectors[2][0].wait()
        drivers[2].wait(timeout=30)
        collectors[2] = start_collector(server_bin, uri, f"{work}/c3-restarted.log")
        proc, path = start_driver(driver_bin, collectors[2][1], 7, work, "d3-restarted")
        drivers.append(proc)
        id_files.append(path)
        time.sleep(seconds / 2)
        for d in drivers:
            if d.poll() is None:
                d.send_signal(signal.SIGTERM)
        for d in drivers:
            d.wait(timeout=30)

        acknowledged = set()
        sent_lines = 0
        for path in id_files:
            with open(path) as f:
                for line in f:
                    line = line.strip()
                    if len(line) == 32:
                        acknowledged.add(line)
                        sent_lines += 1
        stored = set(pg.sql(db, "SELECT replace(report_id::text, '-', '') FROM reports "
                                "WHERE metric_id = (SELECT id FROM metrics WHERE name = 'kill')"
                            ).split())
        n, yes = map(int, pg.sql(db, "SELECT coalesce(sum(n), 0), coalesce(sum(counter0), 0) FROM counts "
                                     "WHERE metric_id = (SELECT id FROM metrics WHERE name = 'kill')"
                                 ).split("|"))
        stored_yes = int(pg.sql(db, "SELECT count(*) FROM reports WHERE bit AND metric_id = "
                                    "(SELECT id FROM metrics WHERE name = 'kill')"))
        shards = int(pg.sql(db, "SELECT count(DISTINCT shard) FROM counts"))
        lost = acknowledged - stored
        print(f"acknowledged report deliveries {sent_lines}, distinct acknowledged ids "
              f"{len(acknowledged)}, stored {len(stored)}, counts n={n} yes={yes} "
              f"(stored yes {stored_yes}), count shards {shards}")
        check(len(acknowledged) > 1000, "the drivers acknowledged too few reports to mean much")
        check(sent_lines > len(acknowledged), "no report id reached two collectors")
        check(not lost, f"{len(lost)} acknowledged reports are not stored, e.g. {sorted(lost)[:3]}")
        check(n == len(stored), f"counts n={n} but {len(stored)} distinct stored reports")
        check(yes == stored_yes, f"counts yes={yes} but {stored_yes} stored yes reports")
        check(shards >= 3, f"expected the collectors' own count shards, found {shards}")

        # A design version added through collector 1 reaches collector 2's GetDesign in time.
        http1, http2 = collectors[0][2], collectors[1][2]
        check(post(http2, "ReportService/GetDesign", {"metric": "kill"})["design"].get(
            "version", 1) in (1, "1"))
        post(http1, "QueryService/AddDesignVersion",
             {"metric": "kill", "design": {"symmetricEpsilon": {"epsilon": 0.5}}})
        added = time.monotonic()
        while True:
            got = post(http2, "ReportService/GetDesign", {"metric": "kill"})
            elapsed = time.monotonic() - added
            if int(got["design"].get("version", 1)) == 2:
                break
            check(elapsed < CACHE_SECONDS + 2, f"collector 2 still serves version 1 after {elapsed:.1f} s")
            time.sleep(0.05)
        print(f"design version 2 added through collector 1 served by collector 2 after "
              f"{elapsed:.2f} s (bound {CACHE_SECONDS} s)")
        print("PASS")
        return 0
    finally:
        for d in drivers:
            if d.poll() is None:
                d.kill()
        for c in collectors:
            if c[0].poll() is None:
                c[0].kill()
                c[0].wait()
        pg.close()


if __name__ == "__main__":
    sys.exit(main())
