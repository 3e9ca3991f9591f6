#!/usr/bin/python3
"""The HTTP listener against hostile clients (issue 25), on the real server binary:

- chunked flood: a tokenless 256 MiB `Transfer-Encoding: chunked` POST is answered 401 from its
  headers, the server stops reading, and its RSS stays within 64 MiB of where it started; with a
  reporter token, a chunked body over --max_message_bytes is answered 413 (thrown away as it
  comes, RSS bounded too); `Content-Length: 99999999999` is answered 413 with the JSON error body
  at once;
- slow loris: 64 connections trickling header lines; /livez and /healthz each answer within 1 s
  meanwhile, and the header deadline (--http_header_timeout_seconds=2) closes every trickler
  although each keeps sending; a connection past --http_max_connections_per_address is closed
  at once while the ones before it are served;
- mutual TLS (the listener checks the client certificate itself): none or one from another CA
  is refused 401, one signed by --tls_client_ca_file is served;
- forgery: analyst calls take only `Content-Type: application/json` (415 otherwise) and refuse a
  cross-origin `Origin` (403), same-origin passes, ReportService keeps accepting; an unknown JSON
  field name of 1 MB is echoed clipped.

Usage: http_hostile_test.py SERVER_BINARY
"""
import base64
import http.client
import json
import os
import select
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, eventually  # noqa: E402
from test_server import start_collector  # noqa: E402
from http_api_test import add_token, call  # noqa: E402

MIB = 1024 * 1024
HOUR = 3600



def rss_bytes(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def post(base, method, body, token=None, headers=None, raw=None):
    """POSTs to /v1/<method>; returns (HTTP status, parsed JSON body)."""
    return call(base, method, body, token=token, raw=raw, headers=headers)


def host_port(base):
    host, port = base.removeprefix("http://").split(":")
    return host, int(port)


def read_answer(sock, timeout):
    """Reads what the server sends until it has a status line and a complete JSON body, or the
    connection ends; returns (status, body text) or (None, text)."""
    data = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([sock], [], [], 0.1)
        if not ready:
            continue
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
        head, sep, body = data.partition(b"\r\n\r\n")
        if sep and body.strip().endswith(b"}"):
            break
    head, _, body = data.partition(b"\r\n\r\n")
    parts = head.split(b" ", 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    return status, body.decode(errors="replace")


class ChunkedSender(threading.Thread):
    """Streams `total` bytes as a chunked body on `sock` until done or the server closes."""

    def __init__(self, sock, total, chunk=64 * 1024):
        super().__init__(daemon=True)
        self.sock, self.total, self.chunk = sock, total, chunk
        self.sent, self.error = 0, None

    def run(self):
        frame = f"{self.chunk:x}\r\n".encode() + b"a" * self.chunk + b"\r\n"
        try:
            while self.sent < self.total:
                self.sock.sendall(frame)
                self.sent += self.chunk
            self.sock.sendall(b"0\r\n\r\n")
        except OSError as error:
            self.error = error


def chunked_post(base, path, total, token=None, rss_pid=None):
    """Sends a chunked POST of `total` bytes; returns (status, body, bytes sent, peak RSS)."""
    host, port = host_port(base)
    sock = socket.create_connection((host, port), timeout=10)
    head = (f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n")
    if token:
        head += f"Authorization: Bearer {token}\r\n"
    sock.sendall((head + "\r\n").encode())
    sender = ChunkedSender(sock, total)
    sender.start()
    peak = [0]
    done = threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], rss_bytes(rss_pid))
            time.sleep(0.01)
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    status, body = read_answer(sock, timeout=60)
    sock.close()
    sender.join(timeout=60)
    done.set()
    watcher.join()
    return status, body, sender.sent, peak[0]


def floods(server_bin, work):
    db = os.path.join(work, "flood.db")
    reporter = add_token(server_bin, db, "reporter")
    server, _, base = start_collector(server_bin, db, os.path.join(work, "flood.log"),
                                      f"--max_message_bytes={MIB}")
    try:
        # Warm up (the first calls allocate), then the baseline.
        for _ in range(3):
            urllib.request.urlopen(f"{base}/livez", timeout=5).read()
        start_rss = rss_bytes(server.pid)
        bound = start_rss + 64 * MIB

        t0 = time.monotonic()
        status, body, sent, peak = chunked_post(base, "/v1/ReportService/SubmitReports",
                                                256 * MIB, rss_pid=server.pid)
        elapsed = time.monotonic() - t0
        check(status == 401, (status, body))
        check("UNAUTHENTICATED" in body, body)
        check(elapsed < 10, f"401 took {elapsed:.1f} s")
        # Refused from its headers: the client could push no more than the sockets' buffers.
        check(sent < 64 * MIB, f"the server read {sent} bytes of a refused body")
        check(peak < bound, f"RSS {peak} > {bound} (start {start_rss})")
        print(f"tokenless chunked 256 MiB: 401 in {elapsed:.2f} s, {sent / MIB:.1f} MiB sent, "
              f"RSS {start_rss / MIB:.1f} -> peak {peak / MIB:.1f} MiB")

        # With a token: counted as it arrives, thrown away past the limit, then 413.
        status, body, sent, peak = chunked_post(base, "/v1/ReportService/SubmitReports",
                                                64 * MIB, token=reporter, rss_pid=server.pid)
        check(status == 413, (status, body))
        error = json.loads(body)["error"]
        check(error["code"] == 413 and error["message"].startswith("body: larger"), body)
        check(peak < bound, f"RSS {peak} > {bound} (start {start_rss})")
        print(f"reporter chunked 64 MiB: 413, RSS peak {peak / MIB:.1f} MiB")

        # An absurd Content-Length: 413 at once, nothing read.
        host, port = host_port(base)
        sock = socket.create_connection((host, port), timeout=10)
        sock.sendall((f"POST /v1/ReportService/SubmitReports HTTP/1.1\r\nHost: {host}\r\n"
                      f"Authorization: Bearer {reporter}\r\nContent-Type: application/json\r\n"
                      "Content-Length: 99999999999\r\n\r\n{").encode())
        status, body = read_answer(sock, timeout=5)
        sock.close()
        check(status == 413, (status, body))
        error = json.loads(body)["error"]
        check(error["code"] == 413 and error["status"] == "INVALID_ARGUMENT", body)
        check("larger than the server accepts" in error["message"], body)
        print("Content-Length: 99999999999: 413 with the JSON error")

        # The server still serves a normal batch.
        now = int(time.time()) // HOUR * HOUR
        code, _ = post(base, "ReportService/SubmitReports",
                       {"reports": [{"metric": "m", "designVersion": 1, "bit": 1,
                                     "reportId": base64.b64encode(b"\0" * 16).decode(),
                                     "eventTimeSeconds": str(now)}]}, token=reporter)
        check(code == 200, code)
    finally:
        server.terminate()
        server.wait(timeout=30)


def timed_get(base, path):
    host, port = host_port(base)
    t0 = time.monotonic()
    connection = http.client.HTTPConnection(host, port, timeout=1.0)
    connection.request("GET", path)
    answer = connection.getresponse()
    body = answer.read()
    connection.close()
    return answer.status, body, time.monotonic() - t0


def closed_by_server(sock):
    """True when the server has closed `sock` (EOF or reset), without blocking."""
    try:
        ready, _, _ = select.select([sock], [], [], 0)
        if not ready:
            return False
        return sock.recv(4096) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True


def slow_loris(server_bin, work):
    db = os.path.join(work, "loris.db")
    server, _, base = start_collector(server_bin, db, os.path.join(work, "loris.log"),
                                      "--http_header_timeout_seconds=2",
                                      "--http_max_connections_per_address=100")
    host, port = host_port(base)
    tricklers = []
    stop = threading.Event()
    try:
        for _ in range(64):
            sock = socket.create_connection((host, port), timeout=5)
            sock.sendall(b"POST /v1/QueryService/ListMetrics HTTP/1.1\r\nHost: x\r\n")
            tricklers.append(sock)
        opened = time.monotonic()

        def trickle():
            n = 0
            while not stop.is_set():
                for sock in tricklers:
                    try:
                        sock.sendall(f"X-Slow-{n}: 1\r\n".encode())
                    except OSError:
                        pass
                n += 1
                stop.wait(0.2)
        trickler = threading.Thread(target=trickle, daemon=True)
        trickler.start()

        # Health answered within 1 s each while the 64 hang.
        latencies = []
        for path, want in (("/livez", b"ALIVE"), ("/healthz", b"SERVING"), ("/livez", b"ALIVE"),
                           ("/healthz", b"SERVING")):
            status, body, elapsed = timed_get(base, path)
            check(status == 200 and want in body, (path, status, body))
            check(elapsed < 1.0, f"{path} took {elapsed:.3f} s under 64 slow connections")
            latencies.append(elapsed)
        still_open = sum(not closed_by_server(s) for s in tricklers)
        check(still_open == 64, f"only {still_open} of 64 tricklers open before the deadline")
        print("64 slow-loris connections: /livez and /healthz answered within 1 s "
              f"(slowest {max(latencies) * 1000:.1f} ms)")

        # The header deadline closes each trickler although it keeps sending.
        eventually(lambda: all(closed_by_server(s) for s in tricklers), 2 + 5,
                   "the header deadline closes the 64 tricklers")
        waited = time.monotonic() - opened
        check(waited >= 1.5, f"tricklers closed after {waited:.2f} s, before the 2 s deadline")
        with urllib.request.urlopen(f"{base}/metrics", timeout=5) as answer:
            text = answer.read().decode()
        cut = [float(line.split()[1]) for line in text.splitlines()
               if line.startswith("deniable_http_connections_cut_total")]
        check(cut and cut[0] >= 64, f"deniable_http_connections_cut_total: {cut}")
        print(f"header deadline: 64 tricklers closed {waited:.2f} s after they opened "
              f"(deniable_http_connections_cut_total {cut[0]:.0f})")
        status, _, elapsed = timed_get(base, "/livez")
        check(status == 200 and elapsed < 1.0, (status, elapsed))
    finally:
        stop.set()
        for sock in tricklers:
            sock.close()
        server.terminate()
        server.wait(timeout=30)

    # Per-address limit: the ninth connection from one address is closed at once; the eight
    # before it are served.
    server, _, base = start_collector(server_bin, os.path.join(work, "limit.db"),
                                      os.path.join(work, "limit.log"),
                                      "--http_max_connections_per_address=8")
    host, port = host_port(base)
    held = []
    try:
        for _ in range(8):
            held.append(socket.create_connection((host, port), timeout=5))
        extra = socket.create_connection((host, port), timeout=5)
        eventually(lambda: closed_by_server(extra), 5, "the 9th connection closed")
        extra.close()
        for sock in held:
            sock.sendall(f"GET /livez HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
            status, body = read_answer(sock, timeout=5)
            check(status == 200 and "ALIVE" in body, (status, body))
        print("per-address limit: the 9th connection closed, the 8 before it served")
    finally:
        for sock in held:
            sock.close()
        server.terminate()
        server.wait(timeout=30)


def forgery(server_bin, work):
    db = os.path.join(work, "csrf.db")
    server, _, base = start_collector(server_bin, db, os.path.join(work, "csrf.log"))
    host, port = host_port(base)
    try:
        code, _ = post(base, "QueryService/CreateMetric", {"name": "m", "design": {"twoCoin": {}}})
        check(code == 200, code)
        for content_type in ("text/plain", "application/x-www-form-urlencoded", None):
            headers = {"Content-Type": content_type} if content_type else {}
            code, body = post(base, "QueryService/DeleteMetric", {"metric": "m"},
                              headers=headers)
            check(code == 415, (content_type, code, body))
            check(body["error"]["code"] == 415 and "content-type" in body["error"]["message"],
                  body)
        code, body = post(base, "QueryService/DeleteMetric", {"metric": "m"},
                          headers={"Content-Type": "application/json",
                                   "Origin": "http://evil.example"})
        check(code == 403 and body["error"]["message"].startswith("origin:"), (code, body))
        code, body = post(base, "QueryService/ListMetrics", {},
                          headers={"Content-Type": "application/json",
                                   "Origin": f"http://{host}:{port}"})
        check(code == 200 and [m["name"] for m in body["metrics"]] == ["m"], (code, body))
        # ReportService keeps its rules: any content type, no Origin rule without CORS.
        code, body = post(base, "ReportService/GetDesign", {"metric": "m"},
                          headers={"Content-Type": "text/plain"})
        check(code == 200, (code, body))
        print("forgery: 415 for text/plain, form and none; 403 cross-origin; same-origin OK")

        # An unknown field of 1 MB: the message clipped.
        name = "x" * MIB
        code, body = post(base, "QueryService/GetPrevalence", None,
                          raw=json.dumps({name: 1}).encode())
        message = body["error"]["message"]
        check(code == 400 and message.startswith("body:"), (code, message[:200]))
        check(len(message) <= 512, f"the error message is {len(message)} bytes")
        check("bytes)" in message, message)
        print(f"unknown 1 MB field: message of {len(message)} bytes")
    finally:
        server.terminate()
        server.wait(timeout=30)


def make_certificates(work):
    """A CA, a server certificate for 127.0.0.1, a client certificate from the CA and one
    self-signed; returns the directory."""
    d = os.path.join(work, "pki")
    os.makedirs(d)

    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=ca",
            "-keyout", "ca.key", "-out", "ca.crt")
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    for name in ("server", "client"):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}", "-keyout",
                f"{name}.key", "-out", f"{name}.csr")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                "-CAcreateserial", "-days", "1", "-extfile", "san.ext", "-out", f"{name}.crt")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=other",
            "-keyout", "other.key", "-out", "other.crt")
    return d


def mutual_tls(server_bin, work):
    pki = make_certificates(work)
    server, _, base = start_collector(
        server_bin, os.path.join(work, "mtls.db"), os.path.join(work, "mtls.log"),
        f"--tls_cert_file={pki}/server.crt", f"--tls_key_file={pki}/server.key",
        f"--tls_client_ca_file={pki}/ca.crt")
    url = base.replace("http://", "https://") + "/livez"
    try:
        for cert, want in ((None, 401), ("other", 401), ("client", 200)):
            context = ssl.create_default_context(cafile=f"{pki}/ca.crt")
            if cert:
                context.load_cert_chain(f"{pki}/{cert}.crt", f"{pki}/{cert}.key")
            try:
                with urllib.request.urlopen(url, timeout=10, context=context) as answer:
                    code, body = answer.status, answer.read().decode()
            except urllib.error.HTTPError as error:
                code, body = error.code, error.read().decode()
            check(code == want, (cert, code, body))
            if want == 401:
                check("tls: a client certificate" in body, body)
        print("mutual TLS: no certificate and another CA's refused 401, the CA's served")
    finally:
        server.terminate()
        server.wait(timeout=30)


def metrics_behind_a_token(server_bin, work):
    """--metrics_token (here from DENIABLE_METRICS_TOKEN, as docs/security.md advises): /metrics
    answers 401 without the bearer token or with another, 200 with it, and names no metric then."""
    token = "scrape-" + base64.urlsafe_b64encode(os.urandom(18)).decode()
    os.environ["DENIABLE_METRICS_TOKEN"] = token
    try:
        server, _, base = start_collector(server_bin, os.path.join(work, "metrics.db"),
                                          os.path.join(work, "metrics.log"))
    finally:
        del os.environ["DENIABLE_METRICS_TOKEN"]
    try:
        check(post(base, "QueryService/CreateMetric",
                   {"name": "uses_drugs", "design": {"twoCoin": {}}})[0] == 200, "create")
        host, port = host_port(base)
        for authorization in (None, "Bearer wrong", f"Basic {token}", f"Bearer {token}x"):
            connection = http.client.HTTPConnection(host, port, timeout=10)
            connection.request("GET", "/metrics",
                               headers={} if authorization is None else
                               {"Authorization": authorization})
            answer = connection.getresponse()
            body = answer.read().decode()
            connection.close()
            check(answer.status == 401, (authorization, answer.status))
            check("uses_drugs" not in body and "--metrics_token" in body, body)
        connection = http.client.HTTPConnection(host, port, timeout=10)
        connection.request("GET", "/metrics", headers={"Authorization": f"Bearer {token}"})
        answer = connection.getresponse()
        body = answer.read().decode()
        connection.close()
        check(answer.status == 200 and 'metric="uses_drugs"' in body, answer.status)
        # The health endpoints stay open: probes carry no token.
        check(timed_get(base, "/livez")[0] == 200, "livez")
    finally:
        server.terminate()
        server.wait(timeout=30)
    print("metrics token: 401 without it (4 forms), 200 with it")


def main():
    server_bin = sys.argv[1]
    work = tempfile.mkdtemp(prefix="deniable_hostile_")
    floods(server_bin, work)
    slow_loris(server_bin, work)
    mutual_tls(server_bin, work)
    forgery(server_bin, work)
    metrics_behind_a_token(server_bin, work)
    print("http hostile: OK")


if __name__ == "__main__":
    main()
