/* The C API of the Deniable SDK: the C++ Reporter (reporter.h) behind plain C types, so that
 * Kotlin (JNI), Swift, Python (ctypes), Go (cgo) and other languages can bind one core.
 *
 * Example (error handling shortened; see docs/sdk.md "C API" and client/src/deniable_c_test.c):
 *
 *   deniable_reporter_options options;
 *   deniable_reporter_options_init(&options);
 *   options.target = "collector.example:443";
 *   options.ca_file = "/etc/deniable/ca.pem";       // NULL or "" with insecure = 1: plaintext
 *   options.bearer_token = token;
 *   options.store_path = "/data/app/deniable.db";   // NULL: in memory (tests only)
 *   deniable_error error;
 *   deniable_reporter* reporter = NULL;
 *   if (deniable_reporter_open(&options, &reporter, &error) != DENIABLE_OK) {
 *     fprintf(stderr, "%s: %s\n", deniable_status_name(error.code), error.message);
 *   }
 *   const char* metrics[] = {"uses_drugs"};
 *   deniable_reporter_prefetch(reporter, metrics, 1, 5000, &error);  // optional
 *   deniable_reporter_report(reporter, "uses_drugs", 1, NULL, NULL, &error);
 *   deniable_reporter_report_value(reporter, "load_ms", 183.0, NULL, NULL, &error);  // numeric
 *   deniable_reporter_report_string(reporter, "crash_sig", (const uint8_t*)"oom", 3, NULL, NULL,
 *                                   &error);  // heavy hitters: bytes and a length
 *   deniable_reporter_close(reporter);   // stops the sender, drains for shutdown_drain_ms
 *
 * The contract is the C++ Reporter's, unchanged (docs/sdk.md): the answer is randomized on the
 * device with OpenSSL's secure generator and only the randomized bit leaves it; memoization,
 * one report per metric per reporting period, the privacy ledger, the durable SQLite queue and
 * the delivery contract (only INVALID_ARGUMENT is permanent; per-report rejections honoured).
 *
 * Errors: every function that can fail returns a deniable_status_code (the gRPC / absl codes,
 * same numbers) and, when `error` is not NULL, fills it with the code and a NUL-terminated
 * message naming the field. No C++ exception crosses this API; an allocation failure inside is
 * returned as DENIABLE_INTERNAL. A NULL pointer where an object is required is
 * DENIABLE_INVALID_ARGUMENT naming the parameter, and changes nothing.
 *
 * Strings are UTF-8, NUL-terminated, owned by the caller, and only read during the call.
 *
 * Thread safety: a deniable_reporter may be used from any number of threads at once, except
 * deniable_reporter_close(), which must be the last call on it. One reporter per device file.
 */
#ifndef DENIABLE_CLIENT_DENIABLE_C_H_
#define DENIABLE_CLIENT_DENIABLE_C_H_

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define DENIABLE_C_API __attribute__((visibility("default")))
#else
#define DENIABLE_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The status codes of gRPC and absl::StatusCode, with the same numbers. */
typedef enum deniable_status_code {
  DENIABLE_OK = 0,
  DENIABLE_CANCELLED = 1,
  DENIABLE_UNKNOWN = 2,
  DENIABLE_INVALID_ARGUMENT = 3,
  DENIABLE_DEADLINE_EXCEEDED = 4,
  DENIABLE_NOT_FOUND = 5,
  DENIABLE_ALREADY_EXISTS = 6,
  DENIABLE_PERMISSION_DENIED = 7,
  DENIABLE_RESOURCE_EXHAUSTED = 8,
  DENIABLE_FAILED_PRECONDITION = 9,
  DENIABLE_ABORTED = 10,
  DENIABLE_OUT_OF_RANGE = 11,
  DENIABLE_UNIMPLEMENTED = 12,
  DENIABLE_INTERNAL = 13,
  DENIABLE_UNAVAILABLE = 14,
  DENIABLE_DATA_LOSS = 15,
  DENIABLE_UNAUTHENTICATED = 16
} deniable_status_code;

/* The longest message kept in deniable_error (longer ones are cut, still NUL-terminated). */
#define DENIABLE_ERROR_MESSAGE_SIZE 512

/* An error filled by a failing call: the code and a message naming the field or the cause.
 * Left as {DENIABLE_OK, ""} by a successful call. Caller-allocated; nothing to free. */
typedef struct deniable_error {
  int code; /* a deniable_status_code */
  char message[DENIABLE_ERROR_MESSAGE_SIZE];
} deniable_error;

/* "OK", "INVALID_ARGUMENT", ...; "UNKNOWN" for a number that is no code. Static storage. */
DENIABLE_C_API const char* deniable_status_name(int code);

typedef struct deniable_reporter deniable_reporter; /* opaque */

/* A public label attached to every report (for example {"region", "N"}). Sent in the clear:
 * never identifying or free-text values. */
typedef struct deniable_label {
  const char* key;
  const char* value;
} deniable_label;

/* Options of deniable_reporter_open(). Call deniable_reporter_options_init() first, then set
 * what differs: new fields may be added at the end in later versions with defaults set there.
 * Durations are in milliseconds. */
typedef struct deniable_reporter_options {
  const char* target;           /* "host:port" of the collector's gRPC port. Required. */
  int insecure;                 /* 1: plaintext gRPC (local development only); 0: TLS. */
  const char* ca_file;          /* TLS: PEM roots of the collector's certificate; NULL/"":
                                   gRPC's default roots. */
  const char* client_cert_file; /* mutual TLS: both or neither; NULL/"": none. */
  const char* client_key_file;
  const char* bearer_token;      /* sent as "authorization: Bearer ..." (TLS only); NULL: none. */
  const char* store_path;        /* the SQLite device file (created 0600; its directory must
                                    exist); NULL/"": in memory, lost at close (tests only). */
  int sync_every_report;         /* 1 (default): each report synced (survives power loss). */
  double max_epsilon_per_metric; /* nats over the device's life; 0 (default): see reporter.h. */
  int background_sending;        /* 1 (default): a sender thread sends every send_interval_ms. */
  int64_t send_interval_ms;      /* 200 */
  int64_t rpc_timeout_ms;        /* 10000: deadline of each call */
  int64_t first_design_wait_ms;  /* 2000: Report() may fetch an unknown design this long */
  int64_t shutdown_drain_ms;     /* 2000: close() flushes at most this long */
  int64_t max_queued_reports;    /* 100000 */
  int max_batch_reports;         /* 1000 */
  const deniable_label* labels;  /* label_count public labels, copied at open. */
  size_t label_count;
  int one_report_per_period; /* 1 (default): the contract; 0 only for load tests. */
} deniable_reporter_options;

/* Per metric: what this device has reported and spent (MetricLedger in device_store.h). */
typedef struct deniable_metric_ledger {
  int64_t reports_accepted;     /* report() calls that queued a report */
  int64_t reports_acknowledged; /* of those, committed by the collector */
  int64_t randomizations;       /* fresh draws of the randomizer */
  double epsilon_spent;         /* nats: the sum of the design's epsilon over the draws */
  double epsilon_if_fresh;      /* nats: what fresh randomization would have spent */
  int64_t period_start_seconds; /* Unix seconds: the period of the last queued report */
  int64_t reports_this_period;
  int64_t reports_repeated_in_period; /* report() calls that queued nothing (period's report
                                          was queued already) */
} deniable_metric_ledger;

/* Delivery figures (DeliveryStats in reporter.h). */
typedef struct deniable_delivery_stats {
  int64_t queued;       /* reports waiting for an acknowledgement */
  int64_t acknowledged; /* persisted counters, all metrics: */
  int64_t duplicates;
  int64_t dropped_rejected;
  int64_t dropped_queue_full;
  int64_t dropped_too_old;
  int64_t send_attempts; /* since open: */
  int64_t failed_attempts;
  int64_t values_clipped; /* persisted, numeric metrics: reports whose value was outside the
                             metric's range and was clipped to its nearest end. Added with
                             numeric metrics: a caller built against an older header passes a
                             shorter struct and must be rebuilt. */
  /* Added with the shared delivery table (docs/sdk.md "Delivery contract"; a caller built
     against an older header passes a shorter struct and must be rebuilt): */
  int64_t dropped_design_mismatch; /* persisted: rejected as drawn with a design the collector
                                      does not have under that version (FAILED_PRECONDITION,
                                      "design_fingerprint"); not in dropped_rejected */
  int64_t batch_splits;            /* since open: batches halved after a whole-batch
                                      INVALID_ARGUMENT */
  int64_t kept_after_rejection;    /* since open: reports kept after a per-report rejection
                                      with permanent = false */
} deniable_delivery_stats;

/* Fills `options` with the defaults above (target NULL). */
DENIABLE_C_API void deniable_reporter_options_init(deniable_reporter_options* options);

/* Opens a reporter: the gRPC transport, the device store and the sender thread. On success
 * *out receives the reporter (free it with deniable_reporter_close). Errors: INVALID_ARGUMENT
 * naming the field ("target" missing, "client_key_file" without "client_cert_file", a NULL
 * label, an option out of range); NOT_FOUND when a PEM file cannot be read; UNAVAILABLE when
 * the store cannot be opened; DATA_LOSS when store_path is not a device file. Does not contact
 * the collector. */
DENIABLE_C_API int deniable_reporter_open(const deniable_reporter_options* options,
                                          deniable_reporter** out, deniable_error* error);

/* Stops the sender, flushes for at most shutdown_drain_ms (what is left stays in the device
 * file), and frees the reporter. NULL is ignored. */
DENIABLE_C_API void deniable_reporter_close(deniable_reporter* reporter);

/* Fetches and caches the designs of the `count` metrics, each call bounded by timeout_ms.
 * Returns the first error (NOT_FOUND for an unknown metric, UNAVAILABLE, DEADLINE_EXCEEDED);
 * the other metrics are still fetched. */
DENIABLE_C_API int deniable_reporter_prefetch(deniable_reporter* reporter,
                                              const char* const* metrics, size_t count,
                                              int64_t timeout_ms, deniable_error* error);

/* Randomizes `answer` (0: no, any other value: yes) with the metric's design, or takes its
 * memoized bit, and commits the randomized report to the device file; OK means it is durable
 * and will be sent. When the metric's report of this period is queued already nothing is
 * queued and OK is returned. `report_id` (nullable, 16 bytes) receives the random id of the
 * queued report and *report_id_size (nullable) its size: 16, or 0 when nothing was queued.
 * Errors (nothing queued): INVALID_ARGUMENT ("metric" NULL or empty); the design fetch's
 * status for a metric never seen (NOT_FOUND, UNAVAILABLE, DEADLINE_EXCEEDED);
 * FAILED_PRECONDITION for a FRESH_PER_PERIOD metric without max_epsilon_per_metric;
 * RESOURCE_EXHAUSTED when a draw would exceed it; the store's error. */
DENIABLE_C_API int deniable_reporter_report(deniable_reporter* reporter, const char* metric,
                                            int answer, uint8_t* report_id, size_t* report_id_size,
                                            deniable_error* error);

/* deniable_reporter_report for a metric with categories: `category` is the true answer, one of
 * the metric's category names (case sensitive, NUL-terminated), randomized with the metric's
 * categorical design or taken from the memo, exactly as deniable_reporter_report does for bits.
 * Errors (nothing queued): INVALID_ARGUMENT ("metric" or "category" NULL or empty; "category"
 * not one of the metric's categories: the message lists them and never repeats the value
 * passed); FAILED_PRECONDITION for a yes/no metric (and deniable_reporter_report returns it for
 * a metric with categories); otherwise as deniable_reporter_report. */
DENIABLE_C_API int deniable_reporter_report_category(deniable_reporter* reporter,
                                                     const char* metric, const char* category,
                                                     uint8_t* report_id, size_t* report_id_size,
                                                     deniable_error* error);

/* deniable_reporter_report (`category` NULL: a yes/no metric, `answer` the true answer) or
 * deniable_reporter_report_category (`category` the true category; `answer` ignored) with
 * public labels for this report only: the label_count `labels` are added to the options'
 * labels, a key in both taking the value given here, and the merged set is checked with the
 * collector's rules before anything is randomized or queued. Sent in the clear: never
 * identifying or free-text values. Errors: as those two functions, and INVALID_ARGUMENT naming
 * "labels" (a NULL key or value, a label the collector would refuse). */
DENIABLE_C_API int deniable_reporter_report_labeled(deniable_reporter* reporter, const char* metric,
                                                    int answer, const char* category,
                                                    const deniable_label* labels,
                                                    size_t label_count, uint8_t* report_id,
                                                    size_t* report_id_size, deniable_error* error);

/* deniable_reporter_report_category with the true category given by its index in the
 * metric's order (0 <= index < k; the order of GetDesignResponse.categories, as the collector
 * lists them): the same report as by name. Errors (nothing queued): INVALID_ARGUMENT
 * "category: index must be in [0, k) for metric ..." for an index outside the range; otherwise
 * as deniable_reporter_report_category (FAILED_PRECONDITION for a yes/no metric,
 * INVALID_ARGUMENT "metric" for a numeric one). */
DENIABLE_C_API int deniable_reporter_report_category_index(deniable_reporter* reporter,
                                                           const char* metric, int index,
                                                           uint8_t* report_id,
                                                           size_t* report_id_size,
                                                           deniable_error* error);

/* deniable_reporter_report_category_index with public labels for this report only, as
 * deniable_reporter_report_labeled adds them. Errors: as
 * deniable_reporter_report_category_index, and INVALID_ARGUMENT naming "labels". */
DENIABLE_C_API int deniable_reporter_report_category_index_labeled(
    deniable_reporter* reporter, const char* metric, int index, const deniable_label* labels,
    size_t label_count, uint8_t* report_id, size_t* report_id_size, deniable_error* error);

/* Randomizes `value`, the true value of a numeric metric (in the metric's unit), with the
 * metric's numeric design (1BitMean or dBitFlip) and commits the randomized report to the device
 * file, exactly as deniable_reporter_report does for bits (periods, memo, ledger, cap, delivery
 * contract): the value is clipped to the metric's range [lo, hi] (counted in
 * deniable_delivery_stats.values_clipped, not refused), rounded to its level (alpha-point
 * rounding with an alpha drawn once per metric and kept in the device file, or its bucket), and
 * the report memoized for that level is sent, or one is drawn for it (the design's epsilon spent
 * once per distinct level). The value itself is never stored, logged or sent. `report_id` and
 * *report_id_size as for deniable_reporter_report.
 * Errors (nothing queued): INVALID_ARGUMENT ("metric" NULL or empty; "value" NaN; "metric" not
 * a numeric metric, and deniable_reporter_report / _report_category return INVALID_ARGUMENT
 * "metric" for a numeric metric); otherwise as deniable_reporter_report. */
DENIABLE_C_API int deniable_reporter_report_value(deniable_reporter* reporter, const char* metric,
                                                  double value, uint8_t* report_id,
                                                  size_t* report_id_size, deniable_error* error);

/* deniable_reporter_report_value with public labels for this report only, as
 * deniable_reporter_report_labeled adds them. Errors: as deniable_reporter_report_value, and
 * INVALID_ARGUMENT naming "labels". */
DENIABLE_C_API int deniable_reporter_report_value_labeled(
    deniable_reporter* reporter, const char* metric, double value, const deniable_label* labels,
    size_t label_count, uint8_t* report_id, size_t* report_id_size, deniable_error* error);

/* Randomizes the string value (`value_len` bytes at `value`, any bytes but NUL, at most the
 * design's max_length; text as UTF-8; not NUL-terminated: the length says where it ends) of a
 * heavy-hitters metric with the metric's design, for the device's group (drawn once per design
 * and kept in the device file), or takes the report memoized for that value, and commits the
 * randomized report to the device file, exactly as deniable_reporter_report does for bits
 * (periods, memo, ledger, cap, delivery contract). The value is never stored (the memo is keyed
 * by a SHA-256 of it), logged or sent. `value` may be NULL when value_len is 0 (the empty
 * string). `report_id` and *report_id_size as for deniable_reporter_report.
 * Errors (nothing queued): INVALID_ARGUMENT ("metric" NULL or empty; "value" NULL with
 * value_len > 0, longer than max_length or holding a NUL byte: the message gives its length and
 * the limit, or the NUL's offset, never the value); FAILED_PRECONDITION naming the metric's kind
 * ("yes_no", "categorical", "numeric") for a metric that is not heavy_hitters, and
 * deniable_reporter_report / _report_category / _report_category_index / _report_value return
 * FAILED_PRECONDITION naming "heavy_hitters" for a heavy-hitters metric; otherwise as
 * deniable_reporter_report. Thread-safe. */
DENIABLE_C_API int deniable_reporter_report_string(deniable_reporter* reporter, const char* metric,
                                                   const uint8_t* value, size_t value_len,
                                                   uint8_t* report_id, size_t* report_id_size,
                                                   deniable_error* error);

/* deniable_reporter_report_string with public labels for this report only, as
 * deniable_reporter_report_labeled adds them. Errors: as deniable_reporter_report_string, and
 * INVALID_ARGUMENT naming "labels". */
DENIABLE_C_API int deniable_reporter_report_string_labeled(
    deniable_reporter* reporter, const char* metric, const uint8_t* value, size_t value_len,
    const deniable_label* labels, size_t label_count, uint8_t* report_id, size_t* report_id_size,
    deniable_error* error);

/* Sends queued reports on the calling thread until the queue is empty (OK), timeout_ms passed
 * (DEADLINE_EXCEEDED; a negative timeout_ms waits without limit), or the retry policy gave up
 * on transient failures (the last failure's status). Reports dropped under the delivery
 * contract make it return the first drop's status once the queue is empty. */
DENIABLE_C_API int deniable_reporter_flush(deniable_reporter* reporter, int64_t timeout_ms,
                                           deniable_error* error);

/* Reports queued and not yet acknowledged; -1 for a NULL reporter. */
DENIABLE_C_API int64_t deniable_reporter_pending(const deniable_reporter* reporter);

/* The ledger of one metric; all zeros (and OK) for a metric this device never reported.
 * Errors: INVALID_ARGUMENT for NULL arguments; the store's error. */
DENIABLE_C_API int deniable_reporter_ledger(const deniable_reporter* reporter, const char* metric,
                                            deniable_metric_ledger* out, deniable_error* error);

/* Delivery figures. Errors: INVALID_ARGUMENT for NULL arguments; the store's error. */
DENIABLE_C_API int deniable_reporter_stats(const deniable_reporter* reporter,
                                           deniable_delivery_stats* out, deniable_error* error);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DENIABLE_CLIENT_DENIABLE_C_H_ */
