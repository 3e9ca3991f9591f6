"""Deniable: randomized-response telemetry from Python.

    import deniable
    with deniable.Reporter("collector.example:443", store_path="deniable.db",
                           credentials=grpc.ssl_channel_credentials(open("ca.pem", "rb").read()),
                           bearer_token=token) as reporter:
        reporter.prefetch(["uses_drugs"])
        reporter.report("uses_drugs", True)   # randomized here, durable, sent in the background

    q = deniable.QueryClient("collector.example:443", credentials=..., bearer_token=analyst)
    q.prevalence("uses_drugs")                # a Prevalence dataclass
    deniable.to_dataframe(q.prevalence("uses_drugs", group_by="region").groups)  # with pandas

    reporter.report("vote", "U")     # a metric with categories: the true category by name
    # report() returns a ReportResult: QUEUED (with report_id) or ALREADY_REPORTED ("already
    # reported this period; nothing sent", falsy). Development: deniable.Reporter.local()
    # and deniable.QueryClient.local() talk plaintext to 127.0.0.1:50051.
    q.prevalence("vote").shares      # [CategoryShare]: estimate, consistent share, intervals

    reporter.report_value("minutes", 42.5)   # a numeric metric: clipped, rounded, randomized
    q.prevalence("minutes").numeric  # NumericEstimate: mean, total, buckets, quantiles

    reporter.report_string("app", "firefox")  # a heavy-hitters metric: bytes or str (UTF-8)
    q.top_values("app").values       # [ValueShare]: the common values, found unseen
    q.frequencies("app", ["firefox"])  # the shares of given values

The Reporter keeps the C++ SDK's contract (docs/sdk.md): the true answer is randomized on the
device with the `secrets` module and never leaves it; memoization per (metric, design version,
answer), or per (metric, design version, category) for a metric with categories (k-RR, OUE or
OLH: deniable.categorical); one report per metric per reporting period; the privacy ledger; a
SQLite queue; only INVALID_ARGUMENT is permanent, per-report rejections are honoured.
"""
from deniable.errors import DeniableError, StatusCode
from deniable.reporter import DeliveryStats, MetricLedger, Reporter, ReportOutcome, ReportResult
from deniable.query import (CategoryDifference, CategoryShare, Difference, GroupPrevalence,
                            Metric, NumericBucket, NumericEstimate, NumericQuantile, Prevalence,
                            QueryClient, SeriesPoint, SurveyPlan, TopValues, ValueShare,
                            VersionEstimate, change_words, to_dataframe)

__all__ = ["DeniableError", "StatusCode", "Reporter", "ReportOutcome", "ReportResult",
           "MetricLedger", "DeliveryStats",
           "QueryClient", "Metric", "Prevalence", "GroupPrevalence", "SeriesPoint",
           "Difference", "SurveyPlan", "to_dataframe", "CategoryShare", "CategoryDifference",
           "VersionEstimate", "change_words", "NumericEstimate", "NumericBucket",
           "NumericQuantile", "TopValues", "ValueShare"]
__version__ = "0.1.0"
