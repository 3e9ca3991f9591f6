#!/usr/bin/python3
"""The HTTP/JSON API of the real deniable-server: every method, error mapping, tokens and roles,
the rate limit, /metrics, and equality with the gRPC answers (through the real CLI).

Usage: http_api_test.py SERVER_BINARY CLI_BINARY
"""
import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from test_server import start_server  # noqa: E402
from checks import check  # noqa: E402
from api_json import same_answer  # noqa: E402

HOUR = 3600


def call(base, method, body=None, token=None, raw=None, headers=None):
    """POSTs to /v1/<method>; returns (HTTP status, parsed JSON body). `headers` replaces the
    default {"Content-Type": "application/json"}."""
    data = raw if raw is not None else json.dumps(body if body is not None else {}).encode()
    request = urllib.request.Request(f"{base}/v1/{method}", data=data, method="POST",
                                     headers=headers if headers is not None else
                                     {"Content-Type": "application/json"})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def get(base, path):
    with urllib.request.urlopen(f"{base}{path}", timeout=10) as answer:
        return answer.status, answer.headers.get("Content-Type"), answer.read().decode()


def expect_error(answer, http_status, status, message_part):
    code, body = answer
    check(code == http_status, (code, body))
    error = body["error"]
    check(error["code"] == http_status and error["status"] == status, body)
    check(message_part in error["message"], (message_part, body))


def reports(metric, count, bits, event_time, labels=None, first_id=0):
    out = []
    for i in range(count):
        rid = (first_id + i).to_bytes(16, "big")
        r = {"metric": metric, "designVersion": 1, "bit": bits[i % len(bits)],
             "reportId": base64.b64encode(rid).decode(), "eventTimeSeconds": str(event_time)}
        if labels:
            r["labels"] = labels[i % len(labels)]
        out.append(r)
    return {"reports": out}


def add_token(server_bin, db, role):
    return subprocess.run([server_bin, "tokens", "add", f"--role={role}", f"--db={db}"],
                          check=True, capture_output=True, text=True).stdout.strip()


def http_base(log_path):
    m = re.search(r"http_port=(\d+)", open(log_path).read())
    check(m, "no http_port in the log")
    return f"http://127.0.0.1:{m.group(1)}"


def metric_series(text, name):
    """(labels, value) of every sample of `name` in a Prometheus text exposition."""
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        m = re.match(r"([a-z_]+)(\{([^}]*)\})? (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        yield dict(re.findall(r'(\w+)="([^"]*)"', m.group(3) or "")), float(m.group(4))


def metric_value(text, name, **labels):
    """The sum of the samples of `name` whose labels include `labels` (None if there is none)."""
    values = [v for got, v in metric_series(text, name)
              if all(got.get(k) == want for k, want in labels.items())]
    return sum(values) if values else None


def tokenless(server_bin, cli_bin, work):
    db = os.path.join(work, "open.db")
    log = os.path.join(work, "open.log")
    server, target = start_server(server_bin, db, log, "--http_listen=127.0.0.1:0")
    base = http_base(log)
    try:
        # Every QueryService method and ReportService GetDesign / SubmitReports.
        code, metric = call(base, "QueryService/CreateMetric",
                            {"name": "smokes", "description": "Do you smoke?",
                             "design": {"twoCoin": {}}})
        check(code == 200 and metric["name"] == "smokes" and metric["design"]["version"] == 1)
        expect_error(call(base, "QueryService/CreateMetric",
                          {"name": "smokes", "design": {"twoCoin": {}}}), 409, "ALREADY_EXISTS",
                     "smokes")
        expect_error(call(base, "QueryService/CreateMetric",
                          {"name": "bad", "design": {"forcedResponse": {"p": 1.5}}}), 400,
                     "INVALID_ARGUMENT", "design.forced_response")
        code, design = call(base, "ReportService/GetDesign", {"metric": "smokes"})
        # The same answer as gRPC's GetDesign, reporting period and randomization included.
        check(design["reportingPeriodSeconds"] == 86400, design)
        check(design["randomization"] == "MEMOIZED", design)
        check(code == 200 and design["design"]["a"] == 0.75, design)
        expect_error(call(base, "ReportService/GetDesign", {"metric": "nope"}), 404, "NOT_FOUND",
                     "nope")
        now = int(time.time()) // HOUR * HOUR
        code, submitted = call(base, "ReportService/SubmitReports",
                               reports("smokes", 300, [1, 0, 0], now - 2 * HOUR,
                                       [{"region": "N"}, {"region": "S"}]))
        check(code == 200 and submitted["accepted"] == 300, submitted)
        code, again = call(base, "ReportService/SubmitReports",
                           reports("smokes", 10, [1], now - 2 * HOUR, [{"region": "N"}]))
        check(code == 200 and again["accepted"] == 0 and again["duplicates"] == 10, again)
        bad = reports("smokes", 5, [1], now - HOUR, first_id=1000)
        for r in bad["reports"]:
            r["bit"] = 2
        # Judged report by report: OK, nothing stored, each report rejected with its index.
        code, judged = call(base, "ReportService/SubmitReports", bad)
        check(code == 200 and judged.get("accepted", 0) == 0, judged)
        check([r["index"] for r in judged["rejections"]] == [0, 1, 2, 3, 4], judged)
        check("reports[3].bit" in judged["rejections"][3]["reason"], judged)
        check(all(r["permanent"] for r in judged["rejections"]), judged)
        # A report naming a metric the server does not have: rejected alone, never a label.
        stranger = reports("no_such_metric", 1, [1], now - HOUR, first_id=2000)
        code, judged = call(base, "ReportService/SubmitReports", stranger)
        check(code == 200 and judged.get("accepted", 0) == 0, judged)
        check([r["code"] for r in judged["rejections"]] == [5], judged)  # NOT_FOUND
        # Only batch-wide limits refuse a call whole.
        expect_error(call(base, "ReportService/SubmitReports", {"reports": []}), 400,
                     "INVALID_ARGUMENT", "reports")
        expect_error(call(base, "ReportService/SubmitReports", raw=b"{not json"), 400,
                     "INVALID_ARGUMENT", "body:")
        expect_error(call(base, "QueryService/GetPrevalence", {"metrik": "smokes"}), 400,
                     "INVALID_ARGUMENT", "metrik")
        code, prevalence = call(base, "QueryService/GetPrevalence",
                                {"metric": "smokes", "groupBy": "region",
                                 "method": "CLOPPER_PEARSON", "confidenceLevel": 0.9})
        check(code == 200 and prevalence["n"] == 300, prevalence)  # int64: JSON numbers
        check(prevalence["method"] == "CLOPPER_PEARSON" and prevalence["confidenceLevel"] == 0.9)
        check([g["groupValue"] for g in prevalence["groups"]] == ["N", "S"])
        expect_error(call(base, "QueryService/GetPrevalence", {"metric": "nope"}), 404,
                     "NOT_FOUND", "nope")
        code, series = call(base, "QueryService/GetSeries",
                            {"metric": "smokes", "startTimeSeconds": str(now - 48 * HOUR),
                             "endTimeSeconds": str(now + HOUR), "bucket": "HOUR"})
        check(code == 200 and len(series["buckets"]) == 1, series)
        check(series["buckets"][0]["n"] == 300)
        expect_error(call(base, "QueryService/GetDifference",
                          {"first": {"metric": "smokes", "endTimeSeconds": str(now - HOUR)},
                           "second": {"metric": "smokes",
                                      "startTimeSeconds": str(now - 3 * HOUR)}}),
                     400, "INVALID_ARGUMENT", "second: overlaps first")
        check(call(base, "QueryService/CreateMetric",
                    {"name": "vapes", "design": {"twoCoin": {}}})[0] == 200)
        code, _ = call(base, "ReportService/SubmitReports",
                       reports("vapes", 60, [1, 1, 0], now - 2 * HOUR))
        check(code == 200)
        code, diff = call(base, "QueryService/GetDifference",
                          {"first": {"metric": "vapes"}, "second": {"metric": "smokes"}})
        check(code == 200 and diff["first"]["n"] == 60 and diff["second"]["n"] == 300, diff)
        check(abs(diff["difference"] - (diff["first"]["estimateUnbiased"] -
                                         diff["second"]["estimateUnbiased"])) < 1e-12, diff)
        code, described = call(base, "QueryService/DescribeDesign",
                               {"design": {"twoCoin": {}}, "prior": 0.3})
        check(code == 200 and abs(described["posteriorGivenYes"] - 0.9 / 1.6) < 1e-12)
        code, plan = call(base, "QueryService/PlanSurvey",
                          {"design": {"twoCoin": {}}, "halfWidth": 0.05})
        check(code == 200 and int(plan["reportsNeededWorstCase"]) > 0, plan)
        code, version = call(base, "QueryService/AddDesignVersion",
                             {"metric": "smokes", "design": {"symmetricEpsilon": {"epsilon": 1}}})
        check(code == 200 and version["design"]["version"] == 2, version)
        code, metrics = call(base, "QueryService/ListMetrics")
        check(code == 200 and [m["name"] for m in metrics["metrics"]] == ["smokes", "vapes"])
        code, stats = call(base, "AdminService/GetServerStats")
        check(code == 200 and stats["reportsAccepted"] == 360, stats)
        check(stats["reportsDuplicate"] == 10 and stats["batchesRejected"] == 2, stats)  # bit=2, bad JSON
        # perMetric (what `deniable tail` polls): the same counts by metric, sorted, no metric="".
        per_metric = {m["metric"]: (int(m["reportsAccepted"]), int(m["reportsDuplicate"]),
                                    int(m["reportsRejected"])) for m in stats["perMetric"]}
        check([m["metric"] for m in stats["perMetric"]] == ["smokes", "vapes"], stats)
        check(per_metric == {"smokes": (300, 10, 5), "vapes": (60, 0, 0)}, per_metric)
        expect_error(call(base, "QueryService/Nope"), 404, "NOT_FOUND", "QueryService/Nope")
        expect_error(call(base, "ReportService/StreamReports"), 404, "NOT_FOUND",
                     "StreamReports")

        # The same numbers as gRPC (the CLI), for the same request.
        cli = subprocess.run([cli_bin, f"--target={target}", "prevalence", "--metric=smokes",
                              "--method=clopper_pearson", "--level=0.9", "--group_by=region",
                              "--json"], check=True, capture_output=True, text=True).stdout
        grpc_answer = json.loads(cli)
        _, http_answer = call(base, "QueryService/GetPrevalence",
                              {"metric": "smokes", "groupBy": "region",
                               "method": "CLOPPER_PEARSON", "confidenceLevel": 0.9})
        check(same_answer(grpc_answer, http_answer), (grpc_answer, http_answer))

        # /metrics: one source with GetServerStats; calls counted per transport.
        code, content_type, text = get(base, "/metrics")
        check(code == 200 and content_type.startswith("text/plain; version=0.0.4"), content_type)
        check(metric_value(text, "deniable_reports_total", outcome="accepted") == 360, text)
        check(metric_value(text, "deniable_reports_total", outcome="duplicate") == 10)
        check(metric_value(text, "deniable_report_batches_rejected_total", reason="invalid") == 2)
        check(metric_value(text, "deniable_reports_rejected_total", code="INVALID_ARGUMENT") == 5)
        # By metric (issue 13): each metric's own reports; the sums are GetServerStats' totals;
        # a name the server does not have is no label (its report counts under metric="").
        check(metric_value(text, "deniable_reports_total", outcome="accepted",
                            metric="smokes") == 300)
        check(metric_value(text, "deniable_reports_total", outcome="accepted",
                            metric="vapes") == 60)
        check(metric_value(text, "deniable_reports_total", outcome="duplicate",
                            metric="smokes") == 10)
        check(metric_value(text, "deniable_reports_rejected_total", code="INVALID_ARGUMENT",
                            metric="smokes") == 5)
        check(metric_value(text, "deniable_reports_rejected_total", code="NOT_FOUND",
                            metric="") == 1)
        check(metric_value(text, "deniable_reports_rejected_total", code="INVALID_ARGUMENT",
                            metric="") == 0)  # the body that was no JSON: 0 reports known
        labels = {got.get("metric") for got, _ in metric_series(text, "deniable_reports_total")}
        check(labels == {"", "smokes", "vapes"}, labels)
        check(metric_value(text, "deniable_reports_total", outcome="rejected") == \
            int(stats["reportsRejected"]) == 6, (text, stats))
        check(metric_value(text, "deniable_calls_total", transport="http",
                            method="deniable.v1.QueryService/GetPrevalence", code="NOT_FOUND") == 1)
        check(metric_value(text, "deniable_calls_total", transport="grpc",
                            method="deniable.v1.QueryService/GetPrevalence", code="OK") == 1)
        check(metric_value(text, "deniable_commit_reports_sum") == 370, text)
        check(metric_value(text, "deniable_commit_seconds_count") >= 2)
        check(metric_value(text, "deniable_database_bytes") > 0)
        check(metric_value(text, "process_resident_memory_bytes") > 1e6)
        check(metric_value(text, "deniable_build_info") == 1)
        check(metric_value(text, "deniable_commit_queue_calls") == 0)
        code, content_type, page = get(base, "/")
        check(code == 200 and content_type.startswith("text/html") and "<html" in page)
        print("tokenless: every method, errors, gRPC equality and /metrics OK")
    finally:
        server.terminate()
        server.wait(timeout=30)


def with_tokens(server_bin, work):
    db = os.path.join(work, "tokens.db")
    log = os.path.join(work, "tokens.log")
    analyst = add_token(server_bin, db, "analyst")
    reporter = add_token(server_bin, db, "reporter")
    server, _ = start_server(server_bin, db, log, "--http_listen=127.0.0.1:0",
                             "--rate_limit_reports_per_second=1", "--rate_limit_burst=20")
    base = http_base(log)
    try:
        expect_error(call(base, "QueryService/ListMetrics"), 401, "UNAUTHENTICATED",
                     "authorization: missing")
        expect_error(call(base, "QueryService/ListMetrics", token="dn_wrong"), 401,
                     "UNAUTHENTICATED", "unknown or revoked")
        expect_error(call(base, "QueryService/ListMetrics", token=reporter), 403,
                     "PERMISSION_DENIED", "needs role analyst")
        code, _ = call(base, "QueryService/CreateMetric",
                       {"name": "m", "design": {"twoCoin": {}}}, token=analyst)
        check(code == 200)
        expect_error(call(base, "ReportService/SubmitReports",
                          reports("m", 1, [1], int(time.time()) // HOUR * HOUR), token=analyst),
                     403, "PERMISSION_DENIED", "needs role reporter")
        check(call(base, "ReportService/GetDesign", {"metric": "m"}, token=reporter)[0] == 200)
        check(call(base, "ReportService/GetDesign", {"metric": "m"}, token=analyst)[0] == 200)
        now = int(time.time()) // HOUR * HOUR
        code, ok = call(base, "ReportService/SubmitReports", reports("m", 15, [1], now),
                        token=reporter)
        check(code == 200 and ok["accepted"] == 15, ok)
        expect_error(call(base, "ReportService/SubmitReports",
                          reports("m", 15, [1], now, first_id=100), token=reporter),
                     429, "RESOURCE_EXHAUSTED", "rate limit")
        _, _, text = get(base, "/metrics")  # unauthenticated, like the health check
        check(metric_value(text, "deniable_report_batches_rejected_total",
                            reason="rate_limited") == 1)
        check(metric_value(text, "deniable_report_batches_rejected_total",
                            reason="permission_denied") == 1)
        check(analyst not in open(log).read() and reporter not in open(log).read())
        print("tokens: 401 / 403 / 429 and roles OK")
    finally:
        server.terminate()
        server.wait(timeout=30)


def refusals(server_bin, work):
    db = os.path.join(work, "refuse.db")
    result = subprocess.run([server_bin, "--listen=127.0.0.1:0", "--http_listen=0.0.0.0:0",
                             f"--db={db}"], capture_output=True, text=True, timeout=30)
    check(result.returncode == 2 and "non-loopback address 0.0.0.0:0" in result.stderr + \
        result.stdout, result)
    result = subprocess.run([server_bin, "--listen=127.0.0.1:0", "--http_listen=127.0.0.1:nonsense",
                             f"--db={db}"], capture_output=True, text=True, timeout=30)
    check(result.returncode != 0 and "http_listen" in result.stderr + result.stdout, result)
    print("refusals: non-loopback without --insecure, bad address OK")


def main():
    server_bin, cli_bin = sys.argv[1:3]
    work = tempfile.mkdtemp(prefix="deniable_http_")
    tokenless(server_bin, cli_bin, work)
    with_tokens(server_bin, work)
    refusals(server_bin, work)
    print("http api: OK")


if __name__ == "__main__":
    main()
