#!/usr/bin/env python3
"""The C API (deniable_c.h) against the real deniable-server: the C program
client/src/deniable_c_test.c (a yes/no metric, a numeric one and a heavy-hitters one), then the
same shared library from Python ctypes (how Kotlin's JNI or Swift would bind it): reports
arrive, counted exactly once, errors carry a code and a message naming the field, and no C++
exception crosses the boundary.

Usage: c_api_test.py SERVER_BINARY CLI_BINARY C_TEST_BINARY LIBDENIABLE_C
"""
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from test_server import start_collector  # noqa: E402
from checks import check  # noqa: E402

N = 600  # ctypes reports, each standing for a device (one_report_per_period = 0)


class Label(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char_p), ("value", ctypes.c_char_p)]


class Options(ctypes.Structure):
    _fields_ = [("target", ctypes.c_char_p), ("insecure", ctypes.c_int),
                ("ca_file", ctypes.c_char_p), ("client_cert_file", ctypes.c_char_p),
                ("client_key_file", ctypes.c_char_p), ("bearer_token", ctypes.c_char_p),
                ("store_path", ctypes.c_char_p), ("sync_every_report", ctypes.c_int),
                ("max_epsilon_per_metric", ctypes.c_double),
                ("background_sending", ctypes.c_int), ("send_interval_ms", ctypes.c_int64),
                ("rpc_timeout_ms", ctypes.c_int64), ("first_design_wait_ms", ctypes.c_int64),
                ("shutdown_drain_ms", ctypes.c_int64), ("max_queued_reports", ctypes.c_int64),
                ("max_batch_reports", ctypes.c_int), ("labels", ctypes.POINTER(Label)),
                ("label_count", ctypes.c_size_t), ("one_report_per_period", ctypes.c_int)]


class Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * 512)]


class Ledger(ctypes.Structure):
    _fields_ = [(name, ctypes.c_double if name.startswith("epsilon") else ctypes.c_int64)
                for name in ("reports_accepted", "reports_acknowledged", "randomizations",
                             "epsilon_spent", "epsilon_if_fresh", "period_start_seconds",
                             "reports_this_period", "reports_repeated_in_period")]


class Stats(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int64) for name in (
        "queued", "acknowledged", "duplicates", "dropped_rejected", "dropped_queue_full",
        "dropped_too_old", "send_attempts", "failed_attempts", "values_clipped",
        "dropped_design_mismatch", "batch_splits", "kept_after_rejection")]


def load(path):
    lib = ctypes.CDLL(path)
    lib.deniable_status_name.restype = ctypes.c_char_p
    lib.deniable_reporter_pending.restype = ctypes.c_int64
    lib.deniable_reporter_pending.argtypes = [ctypes.c_void_p]
    lib.deniable_reporter_open.argtypes = [ctypes.POINTER(Options),
                                           ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(Error)]
    lib.deniable_reporter_close.argtypes = [ctypes.c_void_p]
    lib.deniable_reporter_report.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                             ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t),
                                             ctypes.POINTER(Error)]
    lib.deniable_reporter_report_category.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
        ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(Error)]
    lib.deniable_reporter_report_value.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_double, ctypes.c_char_p,
        ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(Error)]
    lib.deniable_reporter_flush.argtypes = [ctypes.c_void_p, ctypes.c_int64,
                                            ctypes.POINTER(Error)]
    lib.deniable_reporter_prefetch.argtypes = [ctypes.c_void_p,
                                               ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                                               ctypes.c_int64, ctypes.POINTER(Error)]
    lib.deniable_reporter_ledger.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                             ctypes.POINTER(Ledger), ctypes.POINTER(Error)]
    lib.deniable_reporter_stats.argtypes = [ctypes.c_void_p, ctypes.POINTER(Stats),
                                            ctypes.POINTER(Error)]
    return lib


def cli(cli_bin, target, *args):
    out = subprocess.run([cli_bin, f"--target={target}", *args], check=True,
                         capture_output=True, text=True)
    return out.stdout


def call(base, method, body):
    """One call of the collector's HTTP/JSON API; the answer's JSON."""
    request = urllib.request.Request(f"{base}/v1/{method}", data=json.dumps(body).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def main():
    server_bin, cli_bin, c_test, lib_path = sys.argv[1:5]
    work = tempfile.mkdtemp(prefix="deniable_c_api_")
    server, target, base = start_collector(server_bin, os.path.join(work, "server.db"),
                                           os.path.join(work, "server.log"))
    try:
        cli(cli_bin, target, "create-metric", "--name=c_m", "--design=symmetric_epsilon",
            "--epsilon=1")
        call(base, "QueryService/CreateMetric", {
            "name": "c_value", "minReports": 1, "range": {"lo": 0, "hi": 100, "unit": "ms"},
            "design": {"numeric": {"mechanism": "ONE_BIT_MEAN", "epsilon": 1}}})
        call(base, "QueryService/CreateMetric", {
            "name": "c_sig", "minReports": 1, "design": {"heavyHitters": {"maxLength": 8}}})
        # 1. The C program: errors, one report per period, flush, ledger, restart; a numeric
        # metric's value (clipped, counted), its errors; a heavy-hitters metric's string, its
        # errors.
        subprocess.run([c_test, target, os.path.join(work, "device.db"), "c_m", "no_such",
                        "c_value", "c_sig"], check=True, timeout=60)
        n = call(base, "QueryService/GetPrevalence", {"metric": "c_value"})["n"]
        check(int(n) == 1, n)
        # One device cannot fill every group, so the collector says how many reports it holds.
        try:
            call(base, "QueryService/GetTopValues", {"metric": "c_sig"})
            check(False, "GetTopValues answered from one report")
        except urllib.error.HTTPError as e:
            body = e.read().decode()
            check(e.code == 400 and "(1 reports in all)" in body, body)
            check("zq-" not in body, body)

        # 2. ctypes: N devices' reports through one reporter (a simulation: one per call).
        lib = load(lib_path)
        check(lib.deniable_status_name(14) == b"UNAVAILABLE")
        options = Options()
        lib.deniable_reporter_options_init(ctypes.byref(options))
        check(options.rpc_timeout_ms == 10000 and options.one_report_per_period == 1)
        error = Error()
        handle = ctypes.c_void_p()
        code = lib.deniable_reporter_open(ctypes.byref(options), ctypes.byref(handle),
                                          ctypes.byref(error))
        check(code == 3 and b"target" in error.message and not handle, (code, error.message))

        options.target = target.encode()
        options.insecure = 1
        options.one_report_per_period = 0
        options.background_sending = 1
        labels = (Label * 1)(Label(b"lang", b"ctypes"))
        options.labels = labels
        options.label_count = 1
        code = lib.deniable_reporter_open(ctypes.byref(options), ctypes.byref(handle),
                                          ctypes.byref(error))
        check(code == 0, error.message)
        missing = (ctypes.c_char_p * 1)(b"no_such_metric")
        code = lib.deniable_reporter_prefetch(handle, missing, 1, 5000, ctypes.byref(error))
        check(code == 5 and error.code == 5, (code, error.message))
        code = lib.deniable_reporter_report(handle, b"", 1, None, None, ctypes.byref(error))
        check(code == 3 and b"metric" in error.message, error.message)
        ids = set()
        for i in range(N):
            rid = ctypes.create_string_buffer(16)
            size = ctypes.c_size_t(0)
            code = lib.deniable_reporter_report(handle, b"c_m", int(i % 3 == 0), rid,
                                                ctypes.byref(size), ctypes.byref(error))
            check(code == 0 and size.value == 16, (code, error.message))
            ids.add(rid.raw)
        check(len(ids) == N)  # random 16-byte ids
        code = lib.deniable_reporter_flush(handle, 20000, ctypes.byref(error))
        check(code == 0, error.message)
        check(lib.deniable_reporter_pending(handle) == 0)
        ledger = Ledger()
        check(lib.deniable_reporter_ledger(handle, b"c_m", ctypes.byref(ledger),
                                            ctypes.byref(error)) == 0)
        # Memoized: one draw per true value, however many reports.
        check(ledger.reports_accepted == N and ledger.reports_acknowledged == N)
        check(ledger.randomizations == 2, ledger.randomizations)
        check(abs(ledger.epsilon_spent - 2.0) < 1e-9 and abs(ledger.epsilon_if_fresh - N) < 1e-6)
        stats = Stats()
        check(lib.deniable_reporter_stats(handle, ctypes.byref(stats), ctypes.byref(error)) == 0)
        check(stats.acknowledged == N and stats.queued == 0 and stats.dropped_rejected == 0)

        # 3. A metric with categories (issue 14): the category call and its errors.
        cli(cli_bin, target, "create-metric", "--name=c_vote", "--categories=Y,N,U,A",
            "--design=oue", "--epsilon=1")
        code = lib.deniable_reporter_report_category(handle, b"c_vote", b"Maybe", None, None,
                                                     ctypes.byref(error))
        check(code == 3 and b"category" in error.message, (code, error.message))
        check(b"Maybe" not in error.message, error.message)  # a true answer is never echoed
        code = lib.deniable_reporter_report(handle, b"c_vote", 1, None, None, ctypes.byref(error))
        check(code == 9, (code, error.message))  # FAILED_PRECONDITION: it has categories
        code = lib.deniable_reporter_report_category(handle, b"c_m", b"Y", None, None,
                                                     ctypes.byref(error))
        check(code == 9, (code, error.message))  # FAILED_PRECONDITION: a yes/no metric
        for category in [b"Y", b"N", b"U", b"A"] * 25:
            rid = ctypes.create_string_buffer(16)
            size = ctypes.c_size_t(0)
            code = lib.deniable_reporter_report_category(handle, b"c_vote", category, rid,
                                                         ctypes.byref(size), ctypes.byref(error))
            check(code == 0 and size.value == 16, (code, error.message))
        check(lib.deniable_reporter_flush(handle, 20000, ctypes.byref(error)) == 0, error.message)
        check(lib.deniable_reporter_ledger(handle, b"c_vote", ctypes.byref(ledger),
                                            ctypes.byref(error)) == 0)
        # Memoized per category: one draw, and epsilon 1, per distinct category reported.
        check(ledger.reports_acknowledged == 100 and ledger.randomizations == 4, ledger)
        check(abs(ledger.epsilon_spent - 4.0) < 1e-9)

        # 4. A numeric metric on [0, 100] (issue 28): values outside the range are clipped and
        # counted; the grid {0, 100} has two levels, so two draws however many reports.
        code = lib.deniable_reporter_report_value(handle, b"c_value", float("nan"), None, None,
                                                  ctypes.byref(error))
        check(code == 3 and b"value" in error.message, (code, error.message))
        code = lib.deniable_reporter_report_value(handle, b"c_m", 5.0, None, None,
                                                  ctypes.byref(error))
        check(code == 3 and b"metric" in error.message, (code, error.message))
        before = Stats()
        check(lib.deniable_reporter_stats(handle, ctypes.byref(before), ctypes.byref(error)) == 0)
        for value in [-5.0, 20.0, 50.0, 150.0] * 10:
            size = ctypes.c_size_t(0)
            code = lib.deniable_reporter_report_value(handle, b"c_value", value, None,
                                                      ctypes.byref(size), ctypes.byref(error))
            check(code == 0 and size.value == 16, (code, error.message))
        check(lib.deniable_reporter_flush(handle, 20000, ctypes.byref(error)) == 0, error.message)
        check(lib.deniable_reporter_stats(handle, ctypes.byref(stats), ctypes.byref(error)) == 0)
        check(stats.values_clipped - before.values_clipped == 20, stats.values_clipped)
        check(lib.deniable_reporter_ledger(handle, b"c_value", ctypes.byref(ledger),
                                            ctypes.byref(error)) == 0)
        check(ledger.reports_acknowledged == 40 and ledger.randomizations == 2, ledger)
        check(abs(ledger.epsilon_spent - 2.0) < 1e-9, ledger.epsilon_spent)
        lib.deniable_reporter_close(handle)
        v = json.loads(cli(cli_bin, target, "prevalence", "--metric=c_vote", "--json"))
        check(int(v["n"]) == 100 and [s["category"] for s in v["shares"]] == ["Y", "N", "U", "A"])

        n = call(base, "QueryService/GetPrevalence", {"metric": "c_value"})["n"]
        check(int(n) == 41, n)  # the C program's one report + 40

        p = json.loads(cli(cli_bin, target, "prevalence", "--metric=c_m", "--json"))
        check(int(p["n"]) == N + 1, p["n"])  # the C program's one report + N
        print(f"c_api: C program ok; ctypes {N} reports, server n={p['n']}")
    finally:
        server.terminate()
        server.wait(timeout=30)
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
