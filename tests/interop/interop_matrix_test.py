#!/usr/bin/env python3
"""Interop matrix: C++ (tests/interop/cpp_devices.cc, gRPC), Python (the deniable package,
gRPC), Node and the browser (the JS SDK over HTTP/JSON, the page in headless Chromium) and the
JVM (client/java over JNI and the C API, gRPC) report one metric to one collector. Every device
reports once; device i of each language answers "yes" when i < DEVICES * 0.3; the randomness
is seeded (fixed seeds: a reproducible test), except the JVM's: the C API randomizes with
OpenSSL's generator and takes no seed, so the JVM row varies run to run (|z| < 5 fails with
probability 6e-7). The
server's count per language must be exact, and the debiased estimate of each language and of
all of them within 5 standard errors of the known truth. Prints the matrix.

Usage: interop_matrix_test.py SERVER_BINARY CLI_BINARY CPP_DEVICES [JAVA SDK_JAR TEST_JAR JNI]
(run with the Python SDK's venv python; without chromium the browser column is left out and
said so, and so is the JVM's without the JVM arguments: a build without a JDK)
"""
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop_lib import (NODE, REPO, browser, have_chromium, run_page,  # noqa: E402
                         serve_directory, start_collector, stop)

import grpc  # noqa: E402

import deniable  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from checks import check  # noqa: E402

DEVICES = 400
SHARE = 0.3
METRIC = "matrix_m"


def python_devices(target):
    channel = grpc.insecure_channel(target)
    acknowledged = 0
    for i in range(DEVICES):
        with deniable.Reporter(channel=channel, background_sending=False, seed=3000 + i,
                               labels={"lang": "python"}, shutdown_drain_timeout=0) as r:
            r.report(METRIC, i < DEVICES * SHARE)
            r.flush(10)
            acknowledged += r.ledger()[METRIC].reports_acknowledged
    channel.close()
    return acknowledged


def main():
    server_bin, cli_bin, cpp_devices = sys.argv[1:4]
    jvm = sys.argv[4:8]
    work = tempfile.mkdtemp(prefix="deniable_matrix_")
    pages, origin = serve_directory(os.path.join(REPO, "client", "js"))
    server, target, base = start_collector(server_bin, work, f"--http_cors_origins={origin}")
    driver = None
    try:
        q = deniable.QueryClient(target, insecure=True)
        q.create_metric(METRIC, symmetric_epsilon=1.0)
        seen = {}
        out = subprocess.run([cpp_devices, target, METRIC, str(DEVICES), "1000", str(SHARE)],
                             check=True, capture_output=True, text=True, timeout=120)
        seen["cpp"] = int(out.stdout.strip())
        seen["python"] = python_devices(target)
        out = subprocess.run([NODE, os.path.join(REPO, "tests", "interop", "js_devices.mjs"),
                              base, METRIC, str(DEVICES), "5000", str(SHARE), work],
                             check=True, capture_output=True, text=True, timeout=120)
        seen["node"] = json.loads(out.stdout.strip().splitlines()[-1])["acknowledged"]
        if have_chromium():
            driver = browser(work)
            result = run_page(driver, f"{origin}/e2e_page/index.html?collector={base}"
                                      f"&metric={METRIC}&phase=simulate&devices={DEVICES}"
                                      f"&seed=7000&share={SHARE}", timeout=120)
            seen["browser"] = result["acknowledged"]
        else:
            print("chromium absent: the browser column is left out")

        if jvm:
            java, sdk_jar, test_jar, jni = jvm
            out = subprocess.run([java, f"-Ddeniable.jni.library={jni}", "-cp",
                                  os.pathsep.join([test_jar, sdk_jar]), "org.deniable.JvmSdkTest",
                                  "matrix", target, METRIC, str(DEVICES), str(SHARE)],
                                 check=True, capture_output=True, text=True, timeout=120)
            seen["jvm"] = json.loads(out.stdout.strip().splitlines()[-1])["acknowledged"]
        else:
            print("no JDK in this build: the JVM column is left out")

        p = q.prevalence(METRIC, group_by="lang")
        groups = {g.group.split("=", 1)[-1]: g for g in p.groups}
        # js_devices.mjs also makes one FileStore device answering "yes" (label node_file).
        truth_yes = round(DEVICES * SHARE)
        print(f"{'reporter':10} {'sent':>5} {'server n':>8} {'truth':>7} {'estimate':>9} "
              f"{'se':>7} {'z':>6}")
        for lang in seen:
            g = groups[lang]
            truth = truth_yes / DEVICES
            z = (g.estimate - truth) / g.standard_error
            print(f"{lang:10} {seen[lang]:5d} {g.n:8d} {truth:7.4f} {g.estimate:9.4f} "
                  f"{g.standard_error:7.4f} {z:6.2f}")
            check(seen[lang] == DEVICES and g.n == DEVICES, (lang, seen[lang], g.n))
            check(abs(z) < 5, (lang, z))
        check(groups["node_file"].n == 1)
        total = DEVICES * len(seen) + 1
        truth = (truth_yes * len(seen) + 1) / total
        z = (p.estimate - truth) / p.standard_error
        print(f"{'all':10} {total:5d} {p.n:8d} {truth:7.4f} {p.estimate:9.4f} "
              f"{p.standard_error:7.4f} {z:6.2f}   95 % interval [{p.ci_lower:.4f}, "
              f"{p.ci_upper:.4f}]")
        check(p.n == total, (p.n, total))
        check(abs(z) < 5, z)
        check(not math.isnan(p.estimate))
        q.close()
    finally:
        if driver is not None:
            driver.quit()
        pages.shutdown()
        stop(server)
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
