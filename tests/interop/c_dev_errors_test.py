#!/usr/bin/env python3
"""The errors a new developer meets on a first report, through the C API (and so the C++ core
the JVM SDK and Swift bind), against the real deniable-server (issue 30, "errors that say what to
do"; the Python SDK's are in python_dev_mode_test.py, the JS SDK's in its unit tests):

1. Nothing listening: UNAVAILABLE "cannot reach 127.0.0.1:PORT: nothing answered there (is
   deniable-server running ...".
2. The HTTP listener's port given to the gRPC SDK: "an HTTP/1.x server answered there ...".
3. TLS against the plaintext server: "over TLS: the server there speaks plaintext ...", naming
   the plaintext transport (insecure = 1).
4. Plaintext against a TLS server: "in plaintext: the server closed the connection (does it
   expect TLS? ...".
Each is the report() of a metric never seen (its design fetch fails); nothing is queued.
None of them lets gRPC's own log lines ("E1201 ... Handshake failed") reach the process's stderr
(issue 38), unless GRPC_VERBOSITY asks for them: the TLS case run again in a child process with
GRPC_VERBOSITY=ERROR shows them, so the check can see them.

Usage: c_dev_errors_test.py SERVER_BINARY LIBDENIABLE_C
"""
import contextlib
import ctypes
import os
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from c_api_test import Error, Options, load  # noqa: E402 (the ctypes view of deniable_c.h)
from checks import check  # noqa: E402
from test_server import start_collector, start_server  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_report_error(lib, work, target, insecure, ca_file=None):
    """The status name and message of a first report() to `target`."""
    options = Options()
    lib.deniable_reporter_options_init(ctypes.byref(options))
    options.target = target.encode()
    options.insecure = 1 if insecure else 0
    options.ca_file = ca_file.encode() if ca_file else None
    options.store_path = os.path.join(work, f"device-{free_port()}.db").encode()
    options.first_design_wait_ms = 3000
    options.background_sending = 0
    error, handle = Error(), ctypes.c_void_p()
    code = lib.deniable_reporter_open(ctypes.byref(options), ctypes.byref(handle),
                                      ctypes.byref(error))
    check(code == 0, error.message)
    try:
        size = ctypes.c_size_t(99)
        code = lib.deniable_reporter_report(handle, b"first_metric", 1, None, ctypes.byref(size),
                                            ctypes.byref(error))
        check(size.value == 0, size.value)
        check(lib.deniable_reporter_pending(handle) == 0, "nothing may be queued")
        return lib.deniable_status_name(code).decode(), error.message.decode()
    finally:
        lib.deniable_reporter_close(handle)


@contextlib.contextmanager
def captured_stderr(into):
    """Points fd 2 (where gRPC's C core logs) at the file `into` for the block."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(into, "wb") as out:
        os.dup2(out.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def quiet_first_report_error(lib, work, target, insecure, ca_file=None):
    """first_report_error, checking that nothing reached stderr meanwhile."""
    log = os.path.join(work, f"stderr-{free_port()}.txt")
    with captured_stderr(log):
        got = first_report_error(lib, work, target, insecure, ca_file)
    written = open(log, errors="replace").read()
    check(written == "", f"stderr of a first report to {target}: {written!r}")
    return got


def expect(got, *fragments):
    name, message = got
    check(name == "UNAVAILABLE", got)
    for fragment in fragments:
        check(fragment in message, f"{fragment!r} not in {message!r}")
    print(f"{name}: {message}")


def verbose_child(lib_path, target, cert):
    """With GRPC_VERBOSITY=ERROR, the TLS case's handshake lines reach stderr."""
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--tls-child", lib_path,
                          target, cert], env=dict(os.environ, GRPC_VERBOSITY="ERROR"),
                         capture_output=True, text=True, timeout=30)
    check(out.returncode == 0, (out.stdout, out.stderr))
    check("Handshake failed" in out.stderr, f"GRPC_VERBOSITY=ERROR showed no gRPC log: "
          f"{out.stderr!r}")
    print("GRPC_VERBOSITY=ERROR: gRPC's handshake lines reach stderr")


def tls_child(lib_path, target, cert):
    lib = load(lib_path)
    work = tempfile.mkdtemp(prefix="deniable_c_dev_child_")
    expect(first_report_error(lib, work, target, False, cert), "over TLS")


def main():
    if sys.argv[1] == "--tls-child":
        tls_child(*sys.argv[2:5])
        return
    server_bin, lib_path = sys.argv[1:3]
    lib = load(lib_path)
    work = tempfile.mkdtemp(prefix="deniable_c_dev_")
    nobody = f"127.0.0.1:{free_port()}"
    expect(quiet_first_report_error(lib, work, nobody, True),
           f"cannot reach {nobody}: nothing answered", "is deniable-server running")

    cert, key = os.path.join(work, "server.crt"), os.path.join(work, "server.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    server, target, base = start_collector(server_bin, os.path.join(work, "plain.db"),
                                           os.path.join(work, "plain.log"))
    try:
        http = base.removeprefix("http://")
        expect(quiet_first_report_error(lib, work, http, True), f"cannot reach {http}",
               "HTTP/1.x server", "--http_listen", "gRPC --listen address")
        expect(quiet_first_report_error(lib, work, target, False, cert),
               f"cannot reach {target} over TLS: the server there speaks plaintext",
               "insecure = 1")
        verbose_child(lib_path, target, cert)
    finally:
        server.kill()
        server.wait()
    server, target = start_server(server_bin, os.path.join(work, "tls.db"),
                                  os.path.join(work, "tls.log"), f"--tls_cert_file={cert}",
                                  f"--tls_key_file={key}")
    try:
        expect(quiet_first_report_error(lib, work, target, True),
               f"cannot reach {target} in plaintext: the server closed the connection",
               "expect TLS")
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
