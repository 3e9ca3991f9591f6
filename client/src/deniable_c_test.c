/* The C API from a C program, against the real collector (run by tests/interop/c_api_test.py):
 * deniable_c_test TARGET STORE_PATH METRIC UNKNOWN_METRIC [NUMERIC_METRIC [STRING_METRIC]].
 * METRIC is a yes/no metric; NUMERIC_METRIC, when given, a numeric metric with the range
 * [0, 100]; STRING_METRIC a heavy-hitters metric with max_length 8. Exit 0 when every check
 * holds. */
#include "deniable/client/deniable_c.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static deniable_reporter* open_reporter(const char* target, const char* store) {
  deniable_reporter_options options;
  deniable_reporter_options_init(&options);
  options.target = target;
  options.insecure = 1;
  options.store_path = store;
  options.background_sending = 0; /* this test sends with flush() only */
  deniable_label labels[] = {{"lang", "c"}};
  options.labels = labels;
  options.label_count = 1;
  deniable_error error;
  deniable_reporter* reporter = NULL;
  int code = deniable_reporter_open(&options, &reporter, &error);
  CHECK(code == DENIABLE_OK && reporter != NULL, "open: %s %s", deniable_status_name(code),
        error.message);
  return reporter;
}

int main(int argc, char** argv) {
  if (argc < 5 || argc > 7) {
    fputs(
        "usage: deniable_c_test TARGET STORE_PATH METRIC UNKNOWN_METRIC [NUMERIC_METRIC "
        "[STRING_METRIC]]\n",
        stderr);
    return 2;
  }
  const char* target = argv[1];
  const char* store = argv[2];
  const char* metric = argv[3];
  const char* unknown = argv[4];
  deniable_error error;

  /* Bad input: a clear error naming the field, nothing opened. */
  deniable_reporter_options bad;
  deniable_reporter_options_init(&bad);
  deniable_reporter* none = (deniable_reporter*)&bad;
  int code = deniable_reporter_open(&bad, &none, &error);
  CHECK(code == DENIABLE_INVALID_ARGUMENT && error.code == code, "code %d", code);
  CHECK(strstr(error.message, "target") != NULL, "message: %s", error.message);
  CHECK(none == NULL, "out not cleared");
  CHECK(strcmp(deniable_status_name(DENIABLE_NOT_FOUND), "NOT_FOUND") == 0, "name");
  CHECK(deniable_reporter_pending(NULL) == -1, "pending(NULL)");

  deniable_reporter* reporter = open_reporter(target, store);
  if (reporter == NULL) return 1;
  const char* unknown_list[] = {unknown};
  code = deniable_reporter_prefetch(reporter, unknown_list, 1, 5000, &error);
  CHECK(code == DENIABLE_NOT_FOUND, "prefetch unknown: %s %s", deniable_status_name(code),
        error.message);
  const char* known_list[] = {metric};
  code = deniable_reporter_prefetch(reporter, known_list, 1, 5000, &error);
  CHECK(code == DENIABLE_OK && error.message[0] == '\0', "prefetch: %s", error.message);
  code = deniable_reporter_report(reporter, NULL, 1, NULL, NULL, &error);
  CHECK(code == DENIABLE_INVALID_ARGUMENT && strstr(error.message, "metric") != NULL,
        "report(NULL): %s", error.message);
  CHECK(deniable_reporter_pending(reporter) == 0, "queued after a refused report");
  /* Per-report labels: a NULL value and a label the collector would refuse queue nothing. */
  const deniable_label null_value[] = {{"screen", NULL}};
  code = deniable_reporter_report_labeled(reporter, metric, 1, NULL, null_value, 1, NULL, NULL,
                                          &error);
  CHECK(code == DENIABLE_INVALID_ARGUMENT && strstr(error.message, "labels[0]") != NULL,
        "report_labeled(NULL value): %s", error.message);
  const deniable_label bad_key[] = {{"Bad Key", "x"}};
  code =
      deniable_reporter_report_labeled(reporter, metric, 1, NULL, bad_key, 1, NULL, NULL, &error);
  CHECK(code == DENIABLE_INVALID_ARGUMENT && strstr(error.message, "labels") != NULL,
        "report_labeled(bad key): %s", error.message);
  CHECK(deniable_reporter_pending(reporter) == 0, "queued after a refused labeled report");

  uint8_t id[16];
  size_t id_size = 99;
  code = deniable_reporter_report(reporter, metric, 1, id, &id_size, &error);
  CHECK(code == DENIABLE_OK && id_size == 16, "report: %s size %zu", error.message, id_size);
  /* One report per metric per period: the second call queues nothing. */
  code = deniable_reporter_report(reporter, metric, 0, id, &id_size, &error);
  CHECK(code == DENIABLE_OK && id_size == 0, "second report: %s size %zu", error.message, id_size);
  CHECK(deniable_reporter_pending(reporter) == 1, "pending %lld",
        (long long)deniable_reporter_pending(reporter));

  code = deniable_reporter_flush(reporter, 10000, &error);
  CHECK(code == DENIABLE_OK, "flush: %s %s", deniable_status_name(code), error.message);
  CHECK(deniable_reporter_pending(reporter) == 0, "pending after flush");

  deniable_metric_ledger ledger;
  code = deniable_reporter_ledger(reporter, metric, &ledger, &error);
  CHECK(code == DENIABLE_OK, "ledger: %s", error.message);
  CHECK(ledger.reports_accepted == 1 && ledger.reports_acknowledged == 1 &&
            ledger.randomizations == 1 && ledger.reports_repeated_in_period == 1,
        "ledger %lld %lld %lld %lld", (long long)ledger.reports_accepted,
        (long long)ledger.reports_acknowledged, (long long)ledger.randomizations,
        (long long)ledger.reports_repeated_in_period);
  CHECK(ledger.epsilon_spent > 0.99 && ledger.epsilon_spent < 1.01, "epsilon %f",
        ledger.epsilon_spent);
  deniable_delivery_stats stats;
  code = deniable_reporter_stats(reporter, &stats, &error);
  CHECK(code == DENIABLE_OK && stats.acknowledged == 1 && stats.queued == 0 &&
            stats.dropped_rejected == 0,
        "stats: ack %lld", (long long)stats.acknowledged);
  deniable_reporter_close(reporter);

  /* The device file keeps the ledger and the period across a restart. */
  reporter = open_reporter(target, store);
  if (reporter == NULL) return 1;
  code = deniable_reporter_report(reporter, metric, 1, id, &id_size, &error);
  CHECK(code == DENIABLE_OK && id_size == 0, "report after restart: size %zu", id_size);
  code = deniable_reporter_ledger(reporter, metric, &ledger, &error);
  CHECK(
      code == DENIABLE_OK && ledger.reports_accepted == 1 && ledger.reports_repeated_in_period == 2,
      "ledger after restart: %lld", (long long)ledger.reports_accepted);
  deniable_reporter_close(reporter);
  deniable_reporter_close(NULL);

  if (argc >= 6) {
    const char* numeric = argv[5];
    reporter = open_reporter(target, store);
    if (reporter == NULL) return 1;
    /* The wrong kind either way, and NaN: INVALID_ARGUMENT naming the field, nothing queued. */
    code = deniable_reporter_report_value(reporter, metric, 5.0, NULL, NULL, &error);
    CHECK(code == DENIABLE_INVALID_ARGUMENT && strstr(error.message, "metric") != NULL,
          "report_value(yes/no metric): %s %s", deniable_status_name(code), error.message);
    code = deniable_reporter_report(reporter, numeric, 1, NULL, NULL, &error);
    CHECK(code == DENIABLE_INVALID_ARGUMENT && strstr(error.message, "ReportValue") != NULL,
          "report(numeric metric): %s %s", deniable_status_name(code), error.message);
    code = deniable_reporter_report_value(reporter, numeric, NAN, NULL, NULL, &error);
    CHECK(code == DENIABLE_INVALID_ARGUMENT && strstr(error.message, "value") != NULL,
          "report_value(NaN): %s %s", deniable_status_name(code), error.message);
    const deniable_label bad_label[] = {{"Bad Key", "x"}};
    const deniable_label screen_label[] = {{"screen", "home"}};
    code = deniable_reporter_report_value_labeled(reporter, numeric, 5.0, bad_label, 1, NULL, NULL,
                                                  &error);
    CHECK(code == DENIABLE_INVALID_ARGUMENT && strstr(error.message, "labels") != NULL,
          "report_value_labeled(bad key): %s", error.message);
    /* A category by index on metrics without categories (tests/conformance/report_options.json
     * has every case): FAILED_PRECONDITION for yes/no, INVALID_ARGUMENT "metric" for numeric. */
    code = deniable_reporter_report_category_index(reporter, metric, 0, NULL, NULL, &error);
    CHECK(code == DENIABLE_FAILED_PRECONDITION && strstr(error.message, "yes/no") != NULL,
          "report_category_index(yes/no metric): %s %s", deniable_status_name(code), error.message);
    code = deniable_reporter_report_category_index_labeled(reporter, numeric, 0, screen_label, 1,
                                                           NULL, NULL, &error);
    CHECK(code == DENIABLE_INVALID_ARGUMENT && strstr(error.message, "metric") != NULL,
          "report_category_index_labeled(numeric metric): %s %s", deniable_status_name(code),
          error.message);
    CHECK(deniable_reporter_pending(reporter) == 0, "queued after refused values");
    /* 150 is above the range [0, 100]: clipped to 100, counted, reported. */
    const deniable_label screen[] = {{"screen", "home"}};
    code = deniable_reporter_report_value_labeled(reporter, numeric, 150.0, screen, 1, id, &id_size,
                                                  &error);
    CHECK(code == DENIABLE_OK && id_size == 16, "report_value: %s %s", deniable_status_name(code),
          error.message);
    code = deniable_reporter_report_value(reporter, numeric, 20.0, id, &id_size, &error);
    CHECK(code == DENIABLE_OK && id_size == 0, "second report_value this period: size %zu",
          id_size);
    code = deniable_reporter_flush(reporter, 10000, &error);
    CHECK(code == DENIABLE_OK, "flush numeric: %s %s", deniable_status_name(code), error.message);
    code = deniable_reporter_stats(reporter, &stats, &error);
    CHECK(code == DENIABLE_OK && stats.values_clipped == 1 && stats.queued == 0,
          "stats: values_clipped %lld", (long long)stats.values_clipped);
    code = deniable_reporter_ledger(reporter, numeric, &ledger, &error);
    CHECK(code == DENIABLE_OK && ledger.reports_acknowledged == 1 && ledger.randomizations == 1 &&
              ledger.reports_repeated_in_period == 1,
          "numeric ledger: ack %lld", (long long)ledger.reports_acknowledged);
    deniable_reporter_close(reporter);
  }

  if (argc == 7) {
    const char* strings = argv[6];
    reporter = open_reporter(target, store);
    if (reporter == NULL) return 1;
    const uint8_t secret[] = "zq-secret"; /* 9 bytes: one past the metric's max_length 8 */
    /* The wrong kind either way: FAILED_PRECONDITION naming the kind, nothing queued. */
    code = deniable_reporter_report_string(reporter, metric, secret, 3, NULL, NULL, &error);
    CHECK(code == DENIABLE_FAILED_PRECONDITION && strstr(error.message, "yes_no") != NULL,
          "report_string(yes/no metric): %s %s", deniable_status_name(code), error.message);
    code = deniable_reporter_report(reporter, strings, 1, NULL, NULL, &error);
    CHECK(code == DENIABLE_FAILED_PRECONDITION && strstr(error.message, "heavy_hitters") != NULL,
          "report(string metric): %s %s", deniable_status_name(code), error.message);
    code = deniable_reporter_report_value(reporter, strings, 1.0, NULL, NULL, &error);
    CHECK(code == DENIABLE_FAILED_PRECONDITION && strstr(error.message, "report_string") != NULL,
          "report_value(string metric): %s %s", deniable_status_name(code), error.message);
    /* Bad values: INVALID_ARGUMENT naming "value", never repeating it. */
    code = deniable_reporter_report_string(reporter, strings, secret, 9, NULL, NULL, &error);
    CHECK(code == DENIABLE_INVALID_ARGUMENT && strstr(error.message, "value") != NULL &&
              strstr(error.message, "zq-secret") == NULL,
          "report_string(too long): %s %s", deniable_status_name(code), error.message);
    const uint8_t with_nul[] = {'z', 'q', 0, 'x'};
    code = deniable_reporter_report_string(reporter, strings, with_nul, 4, NULL, NULL, &error);
    CHECK(code == DENIABLE_INVALID_ARGUMENT && strstr(error.message, "value") != NULL,
          "report_string(NUL): %s %s", deniable_status_name(code), error.message);
    code = deniable_reporter_report_string(reporter, strings, NULL, 2, NULL, NULL, &error);
    CHECK(code == DENIABLE_INVALID_ARGUMENT && strstr(error.message, "value") != NULL,
          "report_string(NULL value): %s %s", deniable_status_name(code), error.message);
    CHECK(deniable_reporter_pending(reporter) == 0, "queued after refused strings");
    /* A value (bytes and a length: the first 3 bytes of the buffer), then the period's repeat. */
    const deniable_label screen[] = {{"screen", "home"}};
    code = deniable_reporter_report_string_labeled(reporter, strings, secret, 3, screen, 1, id,
                                                   &id_size, &error);
    CHECK(code == DENIABLE_OK && id_size == 16, "report_string: %s %s", deniable_status_name(code),
          error.message);
    code = deniable_reporter_report_string(reporter, strings, secret, 3, id, &id_size, &error);
    CHECK(code == DENIABLE_OK && id_size == 0, "second report_string this period: size %zu",
          id_size);
    code = deniable_reporter_flush(reporter, 10000, &error);
    CHECK(code == DENIABLE_OK, "flush strings: %s %s", deniable_status_name(code), error.message);
    code = deniable_reporter_ledger(reporter, strings, &ledger, &error);
    CHECK(code == DENIABLE_OK && ledger.reports_acknowledged == 1 && ledger.randomizations == 1 &&
              ledger.reports_repeated_in_period == 1,
          "string ledger: ack %lld", (long long)ledger.reports_acknowledged);
    deniable_reporter_close(reporter);
  }

  if (failures == 0) puts("deniable_c_test: all checks passed");
  return failures == 0 ? 0 : 1;
}
