#!/usr/bin/env python3
"""The Python SDK's development mode and the errors a new developer meets (issue 30), against
the real deniable-server (plaintext, port 0):

1. Reporter.local() / QueryClient.local() reach a plaintext server named by $DENIABLE_TARGET;
   the first report is QUEUED with a 16-byte id, a second one in the period is
   ALREADY_REPORTED ("already reported this period; nothing sent", falsy, no id), and the
   server counts exactly one report (prevalence n with min_reports=1).
2. No server at the address: DeniableError UNAVAILABLE "cannot reach 127.0.0.1:PORT", not
   "Deadline Exceeded", from report() and from flush().
3. TLS (the default) against the plaintext server: UNAVAILABLE naming TLS, "wrong version
   number", and suggesting insecure=True.
4. insecure=True against a TLS server: UNAVAILABLE "in plaintext: the server closed the
   connection (does it expect TLS? ...)".
5. The collector's HTTP port given as the gRPC target: UNAVAILABLE saying an HTTP/1 server
   answered and naming the HTTP listener and the gRPC port, not "nothing answered there"
   (issue 38).

Usage: python_dev_mode_test.py SERVER_BINARY   (run with the venv's python)
"""
import os
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from checks import check  # noqa: E402
from test_server import start_collector, start_server  # noqa: E402

import grpc  # noqa: E402

import deniable  # noqa: E402


def free_port():
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def expect_error(call, code, *fragments):
    try:
        call()
    except deniable.DeniableError as e:
        check(e.code == code, f"code {e.code}, want {code}: {e}")
        for fragment in fragments:
            check(fragment in e.message, f"{fragment!r} not in {e.message!r}")
        check("Deadline Exceeded" not in e.message, e.message)
        return e
    raise AssertionError(f"no error; want {code}")


def main():
    server_bin = sys.argv[1]
    work = tempfile.mkdtemp(prefix="deniable_pydev_")
    server, target = start_server(server_bin, os.path.join(work, "server.db"),
                                  os.path.join(work, "server.log"))
    try:
        # 1. Development mode, first report, the period's second one, counted once.
        os.environ["DENIABLE_TARGET"] = target
        with deniable.QueryClient.local() as q:
            q.create_metric("dev_m", symmetric_epsilon=1.0, min_reports=1)
            with deniable.Reporter.local(os.path.join(work, "device.db")) as r:
                first = r.report("dev_m", True)
                check(first.outcome == deniable.ReportOutcome.QUEUED, first)
                check(bool(first) and len(first.report_id) == 16, first)
                again = r.report("dev_m", False)
                check(again.outcome == deniable.ReportOutcome.ALREADY_REPORTED, again)
                check(not again and again.report_id is None, again)
                check("already reported this period; nothing sent" in str(again), str(again))
                r.flush(10)
            n = q.prevalence("dev_m").n
            check(n == 1, f"server counted {n} reports, want 1")
        print(f"dev mode: {first}; then: {again}; counted n = {n}")

        # 2. Nothing listening.
        nobody = f"127.0.0.1:{free_port()}"
        with deniable.Reporter.local(None, nobody, first_design_wait=1.0,
                                     background_sending=False, max_attempts=1) as r:
            e = expect_error(lambda: r.report("dev_m", True), grpc.StatusCode.UNAVAILABLE,
                             f"cannot reach {nobody}", "deniable-server running")
            print(f"no server, report(): {e}")
        with deniable.QueryClient.local(nobody, timeout=1.0) as q:
            e = expect_error(lambda: q.list_metrics(), grpc.StatusCode.UNAVAILABLE,
                             f"cannot reach {nobody}")
            print(f"no server, QueryClient: {e}")

        # 3. TLS (the default) against the plaintext server.
        with deniable.Reporter(target, None, first_design_wait=1.0,
                               background_sending=False) as r:
            e = expect_error(lambda: r.report("dev_m", True), grpc.StatusCode.UNAVAILABLE,
                             f"cannot reach {target} over TLS", "plaintext",
                             "wrong version number", "insecure=True")
            print(f"TLS against plaintext: {e}")
    finally:
        server.kill()
        server.wait()

    # 4. Plaintext against a TLS server.
    cert, key = os.path.join(work, "server.crt"), os.path.join(work, "server.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    server, target = start_server(server_bin, os.path.join(work, "tls.db"),
                                  os.path.join(work, "tls.log"), f"--tls_cert_file={cert}",
                                  f"--tls_key_file={key}")
    try:
        with deniable.QueryClient(target, insecure=True, timeout=2.0) as q:
            e = expect_error(lambda: q.list_metrics(), grpc.StatusCode.UNAVAILABLE,
                             f"cannot reach {target} in plaintext", "expect TLS")
            print(f"plaintext against TLS: {e}")
    finally:
        server.kill()
        server.wait()

    # 5. The HTTP listener's port given as the gRPC target.
    server, _, http_url = start_collector(server_bin, os.path.join(work, "http.db"),
                                          os.path.join(work, "http.log"))
    http_target = http_url[len("http://"):]
    try:
        for make in (lambda: deniable.QueryClient(http_target, insecure=True, timeout=2.0),
                     lambda: deniable.QueryClient.local(http_target, timeout=2.0)):
            with make() as q:
                e = expect_error(lambda: q.list_metrics(), grpc.StatusCode.UNAVAILABLE,
                                 f"cannot reach {http_target}: an HTTP/1.x server answered",
                                 "HTTP listener", "gRPC --listen address")
                check("nothing answered" not in e.message, e.message)
        with deniable.Reporter.local(None, http_target, first_design_wait=1.0,
                                     background_sending=False, max_attempts=1) as r:
            e = expect_error(lambda: r.report("dev_m", True), grpc.StatusCode.UNAVAILABLE,
                             "an HTTP/1.x server answered", "gRPC --listen address")
            print(f"HTTP port as the gRPC target: {e}")
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
