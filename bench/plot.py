#!/usr/bin/python3
"""Draws docs/performance.svg from a deniable-bench JSON result (run by hand).

    build/bench/deniable-bench --json=/tmp/bench.json
    /usr/bin/python3 bench/plot.py /tmp/bench.json docs/performance.svg

Left: ingestion throughput of the collector beside the raw limits measured in the same run.
Middle: the bulk loader's append rate as the database grows, with the end-to-end batched rate on an
empty and on the full database. Right: the append rate into one metric-hour as it fills, with the
SDK's random ids and with time-prefixed ids. Needs Debian's python3-matplotlib (/usr/bin/python3).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def median(values):
    values = sorted(values)
    return values[len(values) // 2] if values else 0.0


def main(source, target):
    with open(source) as f:
        result = json.load(f)
    d = result["details"]
    m = {k: median(v) for k, v in d.items() if isinstance(v, list) and v and
         isinstance(v[0], (int, float))}

    fig, (left, right, hour) = plt.subplots(1, 3, figsize=(17, 4.8))
    groups = ["unary\n1 report/call", "batched\n1000/call", "streaming"]
    keys = ["unary", "batched", "streaming"]
    raw = [m.get("raw_grpc_" + k, 0) for k in keys]
    empty = [m.get("empty_" + k, 0) for k in keys]
    large = [m.get("large_" + k, 0) for k in keys]
    x = range(len(groups))
    w = 0.2
    left.bar([i - 1.5 * w for i in x], [v / 1e3 for v in raw], w, label="raw gRPC (no storage)")
    left.bar([i - 0.5 * w for i in x], [m.get("raw_sqlite_batched", 0) / 1e3] * 3, w,
             label="raw SQLite insert (no index)", color="lightgray")
    left.bar([i + 0.5 * w for i in x], [v / 1e3 for v in empty], w, label="Deniable, empty db")
    left.bar([i + 1.5 * w for i in x], [v / 1e3 for v in large], w,
             label="Deniable, %.0f M stored" % (d["stored_reports"] / 1e6))
    left.set_xticks(list(x))
    left.set_xticklabels(groups)
    left.set_yscale("log")
    left.set_ylabel("thousand reports per second (log)")
    left.set_title("Ingestion vs raw limits (same run)")
    left.legend(fontsize=8)

    slices = d.get("bulk_load", [])
    if slices:
        right.plot([s["stored_before"] / 1e6 for s in slices],
                   [s["rows_per_second"] / 1e3 for s in slices], marker="o",
                   label="storage append, 50k rows/transaction")
    right.axhline(m.get("empty_batched", 0) / 1e3, color="C2", linestyle="--",
                  label="end to end batched, empty db")
    right.axhline(m.get("large_batched", 0) / 1e3, color="C3", linestyle=":",
                  label="end to end batched, full db")
    right.set_ylim(bottom=0)
    right.set_xlabel("reports already stored (millions)")
    right.set_ylabel("thousand reports per second")
    right.set_title("No decline as the database grows")
    right.legend(fontsize=8)

    for key, label in (("hour_fill_random_ids", "random ids (the SDK today)"),
                       ("hour_fill_time_ordered_ids", "ids prefixed by time")):
        fill = d.get(key, [])
        hour.plot([s["stored_before"] / 1e6 for s in fill],
                  [s["rows_per_second"] / 1e3 for s in fill], marker="o", label=label)
    hour.axhline(m.get("raw_sqlite_batched", 0) / 1e3, color="lightgray", linestyle="--",
                 label="raw SQLite insert (no index)")
    hour.set_ylim(bottom=0)
    hour.set_xlabel("reports already in the same metric and hour (millions)")
    hour.set_ylabel("thousand reports per second")
    hour.set_title("Cost grows with the reports of one metric-hour")
    hour.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(target)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: plot.py RESULT.json OUTPUT.svg")
    main(sys.argv[1], sys.argv[2])
