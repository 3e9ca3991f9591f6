#!/usr/bin/env python3
"""The JVM SDK from Kotlin: client/java/examples/FirstReport.kt (shown unchanged in
docs/sdk.md) compiled with Debian's kotlinc and -Xjsr305=strict, so the SDK's JSR-305
nullability is part of its Kotlin types (`reportId()` is `ByteArray?`, parameters non-null),
then run against the real server: one report counted, with its per-report label, the second
ALREADY_REPORTED.

Usage: kotlin_sample_test.py SERVER CLI JAVA SDK_JAR JNI_LIBRARY KOTLINC
       kotlin_sample_test.py --absent WHY
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check  # noqa: E402
from components import absent  # noqa: E402
from jvm_sdk_test import Collector, cli, prevalence  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def main():
    if sys.argv[1] == "--absent":
        absent(f"the JVM SDK, which the Kotlin sample needs (not built: {sys.argv[2]})")
    server_bin, cli_bin, java, sdk_jar, jni, kotlinc = sys.argv[1:7]
    if not kotlinc or not os.path.exists(kotlinc):
        absent("kotlinc (Debian: kotlin)")
    source = os.path.join(REPO, "client", "java", "examples", "FirstReport.kt")
    with open(source) as f, open(os.path.join(REPO, "docs", "sdk.md")) as d:
        check("```kotlin\n" + f.read() + "```" in d.read(),
              "docs/sdk.md must show client/java/examples/FirstReport.kt unchanged")
    work = tempfile.mkdtemp(prefix="deniable_kotlin_")
    collector = Collector(server_bin, work)
    try:
        sample_jar = os.path.join(work, "sample.jar")
        out = subprocess.run([kotlinc, "-Xjsr305=strict", "-include-runtime", "-cp", sdk_jar,
                              source, "-d", sample_jar], capture_output=True, text=True,
                             timeout=300)
        check(out.returncode == 0, out.stderr)
        cli(cli_bin, collector.target, "create-metric", "--name=first_metric",
            "--design=symmetric_epsilon", "--epsilon=1", "--min_reports=1")
        env = dict(os.environ, DENIABLE_TARGET=collector.target)
        out = subprocess.run([java, f"-Ddeniable.jni.library={jni}", "-cp",
                              os.pathsep.join([sample_jar, sdk_jar]), "FirstReportKt"],
                             cwd=work, env=env, capture_output=True, text=True, timeout=60)
        check(out.returncode == 0, (out.stdout, out.stderr))
        lines = out.stdout.splitlines()
        check(len(lines) == 3 and "report queued (id " in lines[0] and "(16 bytes)" in lines[0],
              lines)
        check("already reported this period; nothing sent" in lines[1], lines)
        check("queued=0, acknowledged=1" in lines[2], lines)
        p = prevalence(cli_bin, collector.target, "first_metric", "--group_by=screen")
        groups = [(g.get("groupValue", g.get("group_value")), int(g["n"])) for g in p["groups"]]
        check(int(p["n"]) == 1 and groups == [("home", 1)], p)  # the per-report label
        print(f"kotlin_sample: {lines[0]}; server n=1")
    finally:
        collector.stop()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
