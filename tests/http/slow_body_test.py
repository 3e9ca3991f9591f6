#!/usr/bin/python3
"""The HTTP listener against slow-body POSTs from several addresses (issue 38), on the real
server binary, scaled down from the issue's mix (eight addresses x 128 slow-body POSTs against
--http_max_connections=1024) by 8: --http_max_connections=128, eight attacker addresses
127.0.0.2 .. 127.0.0.9, each keeping 16 POSTs open with good headers and a body trickled one byte
a second (a connection cut is opened again at once). Meanwhile, for MIX_SECONDS, four normal
clients on 127.0.0.1 call GetDesign one after another and a probe asks /livez twice a second.

Checks: at least 95 % of the normal clients' calls and every /livez answer succeed (before the
fix: the attackers held all 128 connections until the 60 s request deadline, and the normal
clients were reset at once), and the minimum body rate cut the tricklers
(deniable_http_connections_cut_total > 0). Prints the figures (docs/http.md, "Limits").

Then the reserve: with --http_max_connections_per_address=16 (an operator's explicit cap) the
attackers fill all 128 connections once, without refilling; /livez still answers every time
(from the connections kept for health checks), the two normal clients are answered 503 with
Retry-After while the listener is full, never reset, and served once the body rate has cut the
tricklers.

Usage: slow_body_test.py SERVER_BINARY [--report-only] [--full]
  --report-only: print the figures without checking them (to measure an older binary).
  --full: the issue's size, --http_max_connections=1024 and 128 POSTs per address.
"""
import http.client
import json
import os
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from checks import check, eventually  # noqa: E402
from test_server import start_collector  # noqa: E402

MAX_CONNECTIONS = 128
ATTACKERS = [f"127.0.0.{i}" for i in range(2, 10)]
PER_ATTACKER = 16
MIX_SECONDS = 10
NORMAL_CLIENTS = 4
BODY = b'{"metric":"slow_body_metric"}'


class Attacker(threading.Thread):
    """Keeps PER_ATTACKER slow-body POSTs open from `address`, one body byte a second each."""

    def __init__(self, port, address, stop, refill):
        super().__init__(daemon=True)
        self.port, self.address, self.stop, self.refill = port, address, stop, refill
        self.opened = 0
        self.socks = []

    def connect(self):
        try:
            s = socket.socket()
            s.bind((self.address, 0))
            s.settimeout(2)
            s.connect(("127.0.0.1", self.port))
            s.sendall(b"POST /v1/ReportService/GetDesign HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(BODY))
            s.setblocking(False)
            self.opened += 1
            return [s, 0]
        except OSError:
            return None

    def run(self):
        while not self.stop.is_set():
            while (len(self.socks) < PER_ATTACKER and not self.stop.is_set() and
                   (self.refill or self.opened < PER_ATTACKER)):
                c = self.connect()
                if c is None:
                    break
                self.socks.append(c)
            alive = []
            for s, sent in self.socks:
                try:
                    # A byte a second; a socket the server closed reads as EOF or fails.
                    try:
                        if s.recv(4096) == b"":
                            raise OSError("closed")
                    except BlockingIOError:
                        pass
                    if sent < len(BODY) - 1:
                        s.send(BODY[sent:sent + 1])
                        sent += 1
                    alive.append([s, sent])
                except OSError:
                    s.close()
            self.socks = alive
            full = len(self.socks) == PER_ATTACKER or not self.refill
            self.stop.wait(1.0 if full else 0.05)
        for s, _ in self.socks:
            s.close()


def normal_client(port, stop, tally, lock):
    while not stop.is_set():
        ok = False
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("POST", "/v1/ReportService/GetDesign", body=BODY,
                      headers={"Content-Type": "application/json", "Connection": "close"})
            r = c.getresponse()
            answer = json.loads(r.read())
            ok = r.status == 200 and "design" in answer
            busy = (r.status == 503 and answer["error"]["status"] == "UNAVAILABLE" and
                    r.getheader("Retry-After") == "1")
            c.close()
        except (OSError, http.client.HTTPException, ValueError, KeyError):
            ok = busy = False
        with lock:
            tally["ok" if ok else "busy" if busy else "failed"] += 1
        if not ok:
            stop.wait(0.05)


def livez_probe(port, stop, tally, lock):
    while not stop.is_set():
        ok = False
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/livez")
            r = c.getresponse()
            ok = r.status == 200 and b"ALIVE" in r.read()
            c.close()
        except (OSError, http.client.HTTPException):
            ok = False
        with lock:
            tally["livez_ok" if ok else "livez_failed"] += 1
        stop.wait(0.5)


def cut_total(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    c.request("GET", "/metrics")
    for line in c.getresponse().read().decode().splitlines():
        if line.startswith("deniable_http_connections_cut_total"):
            return float(line.split()[-1])
    return 0.0


def mix(server_bin, work, name, refill, normal_clients, *flags):
    """Runs the mix against a new server; returns the tally and the connections cut."""
    server, _, base = start_collector(server_bin, os.path.join(work, f"{name}.db"),
                                      os.path.join(work, f"{name}.log"),
                                      f"--http_max_connections={MAX_CONNECTIONS}", *flags)
    port = int(base.rsplit(":", 1)[1])
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("POST", "/v1/QueryService/CreateMetric",
                  body=json.dumps({"name": "slow_body_metric", "design": {"twoCoin": {}}}),
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        check(r.status == 200, (r.status, r.read()))
        c.close()

        stop = threading.Event()
        attackers = [Attacker(port, a, stop, refill) for a in ATTACKERS]
        for a in attackers:
            a.start()
        # The attackers have opened their connections (or been refused some) before the mix.
        eventually(lambda: all(a.opened >= PER_ATTACKER or not a.is_alive() for a in attackers),
                   timeout=20, what="the attackers' connections")
        tally = {"ok": 0, "busy": 0, "failed": 0, "livez_ok": 0, "livez_failed": 0}
        lock = threading.Lock()
        mix_stop = threading.Event()
        threads = [threading.Thread(target=normal_client, args=(port, mix_stop, tally, lock))
                   for _ in range(normal_clients)]
        threads.append(threading.Thread(target=livez_probe, args=(port, mix_stop, tally, lock)))
        for t in threads:
            t.start()
        mix_stop.wait(MIX_SECONDS)
        mix_stop.set()
        for t in threads:
            t.join()
        opened = sum(a.opened for a in attackers)
        stop.set()
        for a in attackers:
            a.join()
        cut = cut_total(port)
        print(f"{name}: {len(ATTACKERS)} addresses x {PER_ATTACKER} POSTs at one byte/s "
              f"({'refilled' if refill else 'once'}), --http_max_connections={MAX_CONNECTIONS} "
              f"{' '.join(flags)}, {MIX_SECONDS} s: {normal_clients} normal clients "
              f"{tally['ok']} succeeded, {tally['busy']} answered 503, {tally['failed']} failed; "
              f"/livez {tally['livez_ok']} answered, {tally['livez_failed']} failed; attackers "
              f"opened {opened} connections; connections cut {cut:.0f}")
        return tally, cut
    finally:
        server.kill()
        server.wait()


def main():
    global MAX_CONNECTIONS, PER_ATTACKER
    server_bin = sys.argv[1]
    report_only = "--report-only" in sys.argv[2:]
    if "--full" in sys.argv[2:]:
        MAX_CONNECTIONS, PER_ATTACKER = 1024, 128
    work = tempfile.mkdtemp(prefix="deniable_slow_body_")
    tally, cut = mix(server_bin, work, "mix", True, NORMAL_CLIENTS)
    reserve, reserve_cut = mix(server_bin, work, "reserve", False, 2,
                               f"--http_max_connections_per_address={PER_ATTACKER}")
    if report_only:
        return
    total = tally["ok"] + tally["busy"] + tally["failed"]
    check(total > 0 and tally["ok"] >= 0.95 * total, tally)
    check(tally["ok"] >= 20, tally)
    check(tally["livez_failed"] == 0 and tally["livez_ok"] > 0, tally)
    check(cut > 0, f"no connection cut: {cut}")
    check(reserve["livez_failed"] == 0 and reserve["livez_ok"] > 0, reserve)
    check(reserve["failed"] == 0, f"a normal client was reset, not answered: {reserve}")
    check(reserve["busy"] > 0 and reserve["ok"] > 0, reserve)
    check(reserve_cut >= len(ATTACKERS) * PER_ATTACKER, reserve_cut)


if __name__ == "__main__":
    main()
