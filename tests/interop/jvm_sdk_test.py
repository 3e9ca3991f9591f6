#!/usr/bin/env python3
"""The JVM SDK (client/java: org.deniable over JNI and the C API) against the real
deniable-server. This script starts the server, creates the metrics and runs

1. client/java/src/test/java/org/deniable/JvmSdkTest.java ("contract"), answering its
   "CONTROL ..." lines: stop / start the server on the same port, the server's count of a
   metric (total, or per value of a label). It checks reports counted exactly (40 devices, server
   n = 40), ALREADY_REPORTED as its own outcome, a categorical report, numeric values
   (reportValue: clipping counted, the wrong kind refused), a heavy-hitters string
   (reportString: UTF-8 bytes, the wrong kind and bad values refused), per-report labels, the
   delivery contract's faults (collector down: durable and delivered once it is back;
   INVALID_ARGUMENT: dropped and counted), threads and close();
2. the docs' sample (client/java/examples/FirstReport.java, docs/sdk.md "Java / Kotlin") as a
   new developer runs it: a first report counted by the server;
3. JvmSdkTest "options": the shared table of per-report options
   (tests/conformance/report_options.json: labels, category by name and by index, values), each
   case's code and message, and the server's counts per metric and label value.
4. the sample without -Ddeniable.jni.library, and with a wrong one: an UnsatisfiedLinkError
   naming the property and where libdeniable_jni.so is, not only the JVM's "no deniable_jni in
   java.library.path" (issue 38).

Without a JDK the build leaves the JVM SDK out (DENIABLE_BUILD_JAVA=OFF) and CMake runs this
script with --absent WHAT: skipped (77) on a developer's machine, failed in CI.

Usage: jvm_sdk_test.py SERVER CLI JAVA SDK_JAR TEST_JAR SAMPLE_JAR JNI_LIBRARY
       jvm_sdk_test.py --absent WHY
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conformance"))
from checks import check  # noqa: E402
import report_options  # noqa: E402
from components import absent  # noqa: E402
from test_server import start_server  # noqa: E402


def cli(cli_bin, target, *args):
    out = subprocess.run([cli_bin, f"--target={target}", *args], capture_output=True, text=True)
    check(out.returncode == 0, (args, out.stdout, out.stderr))
    return out.stdout


def prevalence(cli_bin, target, metric, *flags):
    return json.loads(cli(cli_bin, target, "prevalence", f"--metric={metric}", "--json", *flags))


def java_command(java, classpath, jni, main, *args):
    return [java, f"-Ddeniable.jni.library={jni}", "-cp", classpath, main, *args]


class Collector:
    """The server, stopped and started again on the same port when the Java test asks."""

    def __init__(self, server_bin, work):
        self.server_bin, self.work, self.starts = server_bin, work, 0
        # --max_label_values: the Java test's INVALID_ARGUMENT case; HTTP for CreateMetric of a
        # numeric metric (its range).
        self.flags = ["--max_label_values=3", "--http_listen=127.0.0.1:0"]
        self.proc, self.target = self._start("--listen=127.0.0.1:0")

    def _start(self, listen):
        self.starts += 1
        return start_server(self.server_bin, os.path.join(self.work, "server.db"),
                            os.path.join(self.work, f"server{self.starts}.log"), listen,
                            *self.flags)

    def call(self, method, body):
        """One call of the running server's HTTP/JSON API; the answer's JSON."""
        with open(os.path.join(self.work, f"server{self.starts}.log")) as f:
            port = re.search(r"http_port=(\d+)", f.read()).group(1)
        request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/{method}",
                                         data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)

    def start(self):
        port = self.target.rsplit(":", 1)[1]
        self.proc, self.target = self._start(f"--listen=127.0.0.1:{port}")


def run_contract(java, classpath, jni, collector, cli_bin, work):
    proc = subprocess.Popen(java_command(java, classpath, jni, "org.deniable.JvmSdkTest",
                                         "contract", collector.target, work),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    lines = []
    for line in proc.stdout:
        line = line.rstrip("\n")
        lines.append(line)
        print(line)
        if not line.startswith("CONTROL "):
            continue
        command = line.split()[1:]
        if command == ["stop"]:
            collector.stop()
            answer = "stopped"
        elif command == ["start"]:
            collector.start()
            answer = "started"
        elif command[0] == "count":
            answer = str(prevalence(cli_bin, collector.target, command[1])["n"])
        elif command[0] == "groups":
            p = prevalence(cli_bin, collector.target, command[1], f"--group_by={command[2]}")
            values = sorted((g.get("groupValue", g.get("group_value", "")), g["n"])
                            for g in p["groups"])
            answer = " ".join(f"{value}={n}" for value, n in values)
        else:
            answer = "unknown command"
        proc.stdin.write(answer + "\n")
        proc.stdin.flush()
    code = proc.wait(timeout=60)
    check(code == 0, f"JvmSdkTest exited {code}")
    check("jvm_sdk: all checks passed" in lines, lines[-3:])


def run_sample(java, sample_classpath, jni, collector, cli_bin, work):
    """docs/sdk.md's first report: the metric created with the CLI, the sample run, the count."""
    repo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    with open(os.path.join(repo, "client", "java", "examples", "FirstReport.java")) as f:
        sample = f.read()
    with open(os.path.join(repo, "docs", "sdk.md")) as f:
        check("```java\n" + sample + "```" in f.read(),
              "docs/sdk.md must show client/java/examples/FirstReport.java unchanged")
    started = time.monotonic()
    cli(cli_bin, collector.target, "create-metric", "--name=first_metric",
        "--design=symmetric_epsilon", "--epsilon=1", "--min_reports=1")
    env = dict(os.environ, DENIABLE_TARGET=collector.target)
    out = subprocess.run(java_command(java, sample_classpath, jni, "FirstReport"), cwd=work,
                         env=env, capture_output=True, text=True, timeout=60)
    check(out.returncode == 0, (out.stdout, out.stderr))
    lines = out.stdout.splitlines()
    check(len(lines) == 3 and "report queued (id " in lines[0], lines)
    check("already reported this period; nothing sent" in lines[1], lines)
    check("queued=0, acknowledged=1" in lines[2], lines)
    check(os.path.exists(os.path.join(work, "dev-device", "deniable.db")))
    n = prevalence(cli_bin, collector.target, "first_metric")["n"]
    check(int(n) == 1, n)
    print(f"sample: {lines[0]}; server n=1 ({time.monotonic() - started:.1f} s)")


def run_without_library(java, sample_classpath, work):
    """The JNI library not found: the error names -Ddeniable.jni.library and the library."""
    for flags, says in (([], "libdeniable_jni.so is not on java.library.path"),
                        (["-Ddeniable.jni.library=/nonexistent/libdeniable_jni.so"],
                         "cannot load the JNI library "
                         "-Ddeniable.jni.library=/nonexistent/libdeniable_jni.so")):
        out = subprocess.run([java, "-Djava.library.path=/nonexistent", *flags, "-cp",
                              sample_classpath, "FirstReport"], cwd=work, capture_output=True,
                             text=True, timeout=60)
        check(out.returncode != 0, (out.stdout, out.stderr))
        first = out.stderr.splitlines()[0] if out.stderr else ""
        check("java.lang.UnsatisfiedLinkError: org.deniable: " + says in first, out.stderr)
        check("-Ddeniable.jni.library=" in first and "build/client/java/libdeniable_jni.so"
              in first, first)
        print(f"no JNI library: {first}")


def run_options(java, classpath, jni, collector, work):
    """The shared table of per-report options through the JVM SDK (JvmSdkTest "options")."""
    table = report_options.load()
    report_options.create_metrics(table, collector.call)
    rows = ["\t".join(["LABELS", *[f for kv in table["reporter_labels"].items() for f in kv]])]
    for case in table["cases"]:
        kind, arg, labels = report_options.call_of(case)
        text = {"bool": lambda a: "true" if a else "false",
                "value": lambda a: "NaN" if a != a else repr(a)}.get(kind, str)(arg)
        fields = ["CASE", case["name"], case["metric"], kind, text,
                  "0" if labels is None else "1"]
        fields += [f for kv in (labels or {}).items() for f in kv]
        rows.append("\t".join(fields))
    path = os.path.join(work, "report_options.tsv")
    with open(path, "w") as f:
        f.write("\n".join(rows) + "\n")
    out = subprocess.run(java_command(java, classpath, jni, "org.deniable.JvmSdkTest", "options",
                                      collector.target, path),
                         capture_output=True, text=True, timeout=120)
    check(out.returncode == 0, (out.stdout[-2000:], out.stderr[-2000:]))
    results = {}
    for line in out.stdout.splitlines():
        if line.startswith("RESULT\t"):
            _, name, code, message = line.split("\t", 3)
            results[name] = (code, message)
    report_options.check_results(table, results, "JVM SDK")
    report_options.check_server(table, collector.call, "JVM SDK")


def main():
    if sys.argv[1] == "--absent":
        absent(f"the JVM SDK (not built: {sys.argv[2]})")
    server_bin, cli_bin, java, sdk_jar, test_jar, sample_jar, jni = sys.argv[1:8]
    sdk_jar, test_jar, sample_jar, jni = map(os.path.abspath, (sdk_jar, test_jar, sample_jar, jni))
    classpath = os.pathsep.join([test_jar, sdk_jar])
    sample_classpath = os.pathsep.join([sample_jar, sdk_jar])
    work = tempfile.mkdtemp(prefix="deniable_jvm_")
    collector = Collector(server_bin, work)
    try:
        target = collector.target
        for name in ("jvm_count", "jvm_labels", "jvm_outage", "jvm_reject", "jvm_close"):
            cli(cli_bin, target, "create-metric", f"--name={name}", "--design=symmetric_epsilon",
                "--epsilon=1", "--min_reports=1")
        cli(cli_bin, target, "create-metric", "--name=jvm_vote", "--categories=Y,N,U,A",
            "--design=oue", "--epsilon=1", "--min_reports=1")
        collector.call("QueryService/CreateMetric", {
            "name": "jvm_value", "minReports": 1, "range": {"lo": 0, "hi": 100, "unit": "ms"},
            "design": {"numeric": {"mechanism": "ONE_BIT_MEAN", "epsilon": 1}}})
        collector.call("QueryService/CreateMetric", {
            "name": "jvm_sig", "minReports": 1, "design": {"heavyHitters": {"maxLength": 8}}})
        run_options(java, classpath, jni, collector, work)
        run_contract(java, classpath, jni, collector, cli_bin, work)
        run_sample(java, sample_classpath, jni, collector, cli_bin, work)
        run_without_library(java, sample_classpath, work)
    finally:
        collector.stop()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
