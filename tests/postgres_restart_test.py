"""PostgreSQL restarted under load: the collectors answer UNAVAILABLE meanwhile, recover by
themselves, and every acknowledged report is counted exactly once.

    postgres_restart_test.py SERVER_BIN [SECONDS]

Starts a real PostgreSQL (tests/lib/postgres.py) and two deniable-server processes on it. Four
clients (two per collector, HTTP/JSON API) submit batches of 20 reports with fresh ids, as a
device does: a batch answered 503 (UNAVAILABLE) or not answered is kept and sent again, with the
same ids, until it is acknowledged. After SECONDS/3 of load PostgreSQL is stopped with
`pg_ctl stop -m fast` (open transactions are aborted, connections cut), kept down for 1 s, and
started again; the load goes on for the rest of SECONDS and every client then finishes its batch.
Checks:
  - the collectors answered UNAVAILABLE while PostgreSQL was down (at least one 503), nothing
    else but 200 and 503, and both processes are still running (no crash, no restart);
  - calls were acknowledged again after PostgreSQL came back (the collectors reconnected alone);
  - the stored report ids are exactly the acknowledged ones (no loss, nothing unknown), and the
    counts summed over the collectors' shards equal the stored reports, "yes" bits too: each
    acknowledged report counted once, also those whose first COMMIT's answer was lost.
Prints the figures. Skips (exit 0 with a message) only when PostgreSQL is not installed.
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

BATCH = 20


def start_collector(server_bin, uri, log_path):
    proc, _, http = test_server.start_collector(server_bin, uri, log_path)
    return proc, http


def post(http, method, body):
    req = urllib.request.Request(f"{http}/v1/{method}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")
    except (urllib.error.URLError, OSError) as e:  # no answer: the device keeps the batch
        return 0, str(e)


def main():
    server_bin = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 6
    try:
        pg = postgres.TestPostgres()
    except postgres.SkipTest as e:
        print(e)
        return 0
    work = tempfile.mkdtemp(prefix="deniable-pgrestart-")
    collectors = []
    try:
        uri = pg.new_database()
        db = uri.rsplit("/", 1)[1]
        for i in range(2):
            collectors.append(start_collector(server_bin, uri, f"{work}/c{i + 1}.log"))
        status, body = post(collectors[0][1], "QueryService/CreateMetric",
                            {"name": "restart", "design": {"twoCoin": {}}})
        check(status == 200, f"CreateMetric: {status} {body}")

        now = int(time.time())
        hour = now - now % 3600
        lock = threading.Lock()
        acked, acked_yes, answers = set(), set(), {}
        times = {"down": None, "up": None, "last_503": None, "first_ack_after_up": None}
        stop = threading.Event()

        def client(index, http):
            counter = 0
            while not stop.is_set():
                ids = [(index << 64 | (counter + i)).to_bytes(16, "big") for i in range(BATCH)]
                bits = [(counter + i) % 3 == 0 for i in range(BATCH)]
                counter += BATCH
                reports = [{"metric": "restart", "designVersion": 1, "bit": int(b),
                            "reportId": base64.b64encode(r).decode(),
                            "eventTimeSeconds": str(hour)} for r, b in zip(ids, bits)]
                give_up = None
                while True:  # the same batch until acknowledged
                    status, body = post(http, "ReportService/SubmitReports", {"reports": reports})
                    with lock:
                        answers[status] = answers.get(status, 0) + 1
                        if status == 200:
                            check(not body.get("rejections"), body)
                            acked.update(r.hex() for r in ids)
                            acked_yes.update(r.hex() for r, b in zip(ids, bits) if b)
                            if times["up"] is not None and times["first_ack_after_up"] is None:
                                times["first_ack_after_up"] = time.monotonic()
                            break
                        if status == 503:
                            times["last_503"] = time.monotonic()
                    if stop.is_set():
                        give_up = give_up or time.monotonic() + 60
                        if time.monotonic() > give_up:
                            raise AssertionError(f"batch not acknowledged 60 s after the load: "
                                                 f"{status} {body}")
                    time.sleep(0.05)

        threads = [threading.Thread(target=client, args=(i, c[1]))
                   for i, c in enumerate(collectors * 2)]
        start = time.monotonic()
        for t in threads:
            t.start()
        time.sleep(seconds / 3)
        times["down"] = time.monotonic()
        pg.stop("fast")
        time.sleep(1)
        pg.start()
        times["up"] = time.monotonic()
        time.sleep(max(0.0, seconds - (time.monotonic() - start)))
        stop.set()
        for t in threads:
            t.join()
        alive = [c[0].poll() is None for c in collectors]

        stored = set(pg.sql(db, "SELECT replace(report_id::text, '-', '') FROM reports").split())
        stored_yes = int(pg.sql(db, "SELECT count(*) FROM reports WHERE bit"))
        n, yes = map(int, pg.sql(db, "SELECT coalesce(sum(n), 0), coalesce(sum(counter0), 0) "
                                     "FROM counts").split("|"))
        recovered = (times["first_ack_after_up"] - times["up"]
                     if times["first_ack_after_up"] else None)
        print(f"answers by HTTP status {dict(sorted(answers.items()))}; acknowledged "
              f"{len(acked)} reports, stored {len(stored)}, counts n={n} yes={yes} "
              f"(acknowledged yes {len(acked_yes)}); first acknowledgement "
              f"{recovered if recovered is None else round(recovered, 2)} s after PostgreSQL "
              f"was back")
        check(all(alive), f"a collector exited: {alive}")
        check(answers.get(503, 0) > 0, "no UNAVAILABLE while PostgreSQL was down")
        check(set(answers) <= {200, 503}, f"answers other than 200 and 503: {answers}")
        check(recovered is not None, "nothing was acknowledged after PostgreSQL came back")
        lost = acked - stored
        check(not lost, f"{len(lost)} acknowledged reports are not stored, e.g. {sorted(lost)[:3]}")
        unknown = stored - acked
        check(not unknown, f"{len(unknown)} stored reports were never sent to be acknowledged")
        check(n == len(stored), f"counts n={n} but {len(stored)} distinct stored reports")
        check(yes == stored_yes == len(acked_yes), (
            f"counts yes={yes}, stored yes {stored_yes}, acknowledged yes {len(acked_yes)}"))
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
