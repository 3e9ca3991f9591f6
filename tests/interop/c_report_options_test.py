#!/usr/bin/env python3
"""The C API's per-report options against the shared table tests/conformance/report_options.json
(docs/sdk.md "Per-report options"), through ctypes on libdeniable_c against the real
deniable-server: every case's status code and message, then the server's counts per metric and
per label value (tests/conformance/report_options.py).

Usage: c_report_options_test.py SERVER_BINARY LIBDENIABLE_C
"""
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "conformance"))
from c_api_test import Error, Label, Options, load  # noqa: E402
from checks import check  # noqa: E402
from test_server import start_collector  # noqa: E402
import report_options  # noqa: E402


def http(base):
    def call(method, body):
        request = urllib.request.Request(f"{base}/v1/{method}", data=json.dumps(body).encode(),
                                         method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())
    return call


def bind(lib):
    """The report entry points' signatures (c_api_test.load binds the others)."""
    tail = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(Error)]
    labeled = [ctypes.POINTER(Label), ctypes.c_size_t] + tail
    lib.deniable_reporter_report_labeled.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p] + labeled
    lib.deniable_reporter_report_category_index.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int] + tail
    lib.deniable_reporter_report_category_index_labeled.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int] + labeled
    lib.deniable_reporter_report_value_labeled.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_double] + labeled


def run_case(lib, handle, case):
    """One case through the C API: (code name, message); a success must have queued a report."""
    kind, arg, labels = report_options.call_of(case)
    metric = case["metric"].encode()
    error = Error()
    rid = ctypes.create_string_buffer(16)
    size = ctypes.c_size_t(99)
    out = (rid, ctypes.byref(size), ctypes.byref(error))
    pairs = None
    if labels is not None:
        pairs = (Label * max(1, len(labels)))(
            *[Label(k.encode(), v.encode()) for k, v in labels.items()])
    n = 0 if labels is None else len(labels)
    if kind == "bool":
        code = lib.deniable_reporter_report_labeled(handle, metric, int(arg), None, pairs, n, *out)
    elif kind == "category":
        if labels is None:
            code = lib.deniable_reporter_report_category(handle, metric, arg.encode(), *out)
        else:
            code = lib.deniable_reporter_report_labeled(handle, metric, 0, arg.encode(), pairs,
                                                        n, *out)
    elif kind == "category_index":
        if labels is None:
            code = lib.deniable_reporter_report_category_index(handle, metric, arg, *out)
        else:
            code = lib.deniable_reporter_report_category_index_labeled(handle, metric, arg,
                                                                       pairs, n, *out)
    elif labels is None:
        code = lib.deniable_reporter_report_value(handle, metric, arg, *out)
    else:
        code = lib.deniable_reporter_report_value_labeled(handle, metric, arg, pairs, n, *out)
    check(code == error.code, (case["name"], code, error.code))
    check((size.value == 16) == (code == 0), (case["name"], code, size.value))
    return lib.deniable_status_name(code).decode(), error.message.decode()


def main():
    server_bin, lib_path = sys.argv[1:3]
    table = report_options.load()
    work = tempfile.mkdtemp(prefix="deniable_c_options_")
    server, target, base = start_collector(server_bin, os.path.join(work, "server.db"),
                                           os.path.join(work, "server.log"))
    try:
        call = http(base)
        report_options.create_metrics(table, call)
        lib = load(lib_path)
        bind(lib)
        options = Options()
        lib.deniable_reporter_options_init(ctypes.byref(options))
        options.target = target.encode()
        options.insecure = 1
        options.one_report_per_period = 0  # every case's report counts
        options.background_sending = 0
        wide = list(table["reporter_labels"].items())
        labels = (Label * len(wide))(*[Label(k.encode(), v.encode()) for k, v in wide])
        options.labels, options.label_count = labels, len(wide)
        handle = ctypes.c_void_p()
        error = Error()
        code = lib.deniable_reporter_open(ctypes.byref(options), ctypes.byref(handle),
                                          ctypes.byref(error))
        check(code == 0, error.message)
        results = {case["name"]: run_case(lib, handle, case) for case in table["cases"]}
        report_options.check_results(table, results, "C API")
        code = lib.deniable_reporter_flush(handle, 20000, ctypes.byref(error))
        check(code == 0, error.message)
        lib.deniable_reporter_close(handle)
        report_options.check_server(table, call, "C API")
    finally:
        server.terminate()
        server.wait(timeout=30)
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
