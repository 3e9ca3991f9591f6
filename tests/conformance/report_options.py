"""The shared table of per-report options (report_options.json) for the runners against the real
server (the C API through ctypes, the JVM SDK): the metrics created as the table states them,
each case's status and message checked, and what the server counted: per metric, one report for
each case that succeeded, and per label key the reports of each value as the table's merged
labels say (so labels arrive merged with the reporter's, a report's own value winning).

The wire form itself (the kind of answer; category by index == category by name, byte for byte)
is checked by the runners that can seed their SDK (C++, Python, JS); a real server checks only
that it accepts what it is sent.
"""
import json
import math
import os
from collections import Counter

from checks import check

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "report_options.json")


def load():
    with open(TABLE) as f:
        return json.load(f)


def call_of(case):
    """(kind, argument, labels or None): kind one of bool, category, category_index, value;
    the value "NaN" as float NaN."""
    call = case["call"]
    for kind in ("bool", "category", "category_index", "value"):
        if kind in call:
            arg = call[kind]
            if kind == "value":
                arg = math.nan if arg == "NaN" else float(arg)
            return kind, arg, call.get("labels")
    raise ValueError(f"case {case['name']}: no call")


def create_metrics(table, http_call):
    """Creates the table's metrics through the HTTP/JSON API; http_call(method, body)."""
    for name, m in table["metrics"].items():
        d = m["design"]
        body = {"name": name, "minReports": 1}
        if m["kind"] == "yes_no":
            body["design"] = {"symmetricEpsilon": {"epsilon": d["epsilon"]}}
        elif m["kind"] == "categorical":
            body["categories"] = m["categories"]
            body["design"] = {"categorical": {"mechanism": d["mechanism"],
                                              "epsilon": d["epsilon"]}}
        else:
            edges = d["edges"]
            body["range"] = {"lo": edges[0], "hi": edges[-1], "unit": m["unit"]}
            body["design"] = {"numeric": {"mechanism": d["mechanism"], "epsilon": d["epsilon"],
                                          "bucketEdges": edges,
                                          "sampledBuckets": d.get("sampled_buckets", 0),
                                          "unit": m["unit"]}}
        http_call("QueryService/CreateMetric", body)


def check_results(table, results, sdk):
    """results: {case name: (code name, message)} as the SDK returned them ("OK", "" on
    success). Checks every case of the table ran and gave what it expects."""
    for case in table["cases"]:
        name = case["name"]
        check(name in results, f"{sdk}: case {name} did not run")
        code, message = results[name]
        expect = case["expect"]
        if "code" not in expect:
            check(code == "OK", f"{sdk}: {name}: expected OK, got {code} {message}")
            continue
        check(code == expect["code"], f"{sdk}: {name}: expected {expect['code']}, got {code} "
                                      f"{message}")
        for word in expect["message_has"]:
            check(word in message, f"{sdk}: {name}: message {message!r} lacks {word!r}")
        for word in expect.get("message_lacks", []):
            check(word not in message, f"{sdk}: {name}: message {message!r} repeats {word!r}")


def expected_counts(table):
    """{metric: n} and {(metric, label key): Counter(value -> n)} of the cases that succeed."""
    n, groups = Counter(), {}
    for case in table["cases"]:
        if "code" in case["expect"]:
            continue
        n[case["metric"]] += 1
        for key, value in case["expect"]["labels"].items():
            groups.setdefault((case["metric"], key), Counter())[value] += 1
    return n, groups


def check_server(table, http_call, sdk):
    """What the server counted (every report flushed before): per metric its n, per label key
    the n of each value (GetPrevalence group_by)."""
    n, groups = expected_counts(table)
    for metric, count in n.items():
        got = http_call("QueryService/GetPrevalence", {"metric": metric})
        check(int(got["n"]) == count, f"{sdk}: server n of {metric}: {got['n']}, want {count}")
    for (metric, key), want in groups.items():
        got = http_call("QueryService/GetPrevalence", {"metric": metric, "groupBy": key})
        counted = {g.get("groupValue", ""): int(g["n"]) for g in got.get("groups", [])}
        counted.pop("", None)  # reports without the label
        check(counted == dict(want), f"{sdk}: {metric} by {key}: {counted}, want {dict(want)}")
    print(f"{sdk}: {len(table['cases'])} report-option cases; server counts "
          f"{dict(n)} and labels as the table says")
