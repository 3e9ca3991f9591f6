/* The JNI functions of org.deniable.NativeBridge over the C API (deniable_c.h): conversions
 * only. Java strings become modified UTF-8 (the same bytes as UTF-8 for every label, metric and
 * category name the collector accepts); a failing C call becomes a DeniableException carrying
 * its code and message. The signatures come from the header javac -h generates. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "deniable/client/deniable_c.h"
#include "org_deniable_NativeBridge.h"

static void Throw(JNIEnv* env, int code, const char* message) {
  if ((*env)->ExceptionCheck(env)) return; /* a pending OutOfMemoryError and the like win */
  jclass cls = (*env)->FindClass(env, "org/deniable/DeniableException");
  if (cls == NULL) return;
  jmethodID ctor = (*env)->GetMethodID(env, cls, "<init>", "(ILjava/lang/String;)V");
  jstring text = (*env)->NewStringUTF(env, message);
  if (ctor == NULL || text == NULL) return;
  jobject exception = (*env)->NewObject(env, cls, ctor, (jint)code, text);
  if (exception != NULL) (*env)->Throw(env, (jthrowable)exception);
}

/* Throws unless `code` is DENIABLE_OK; returns 1 when it threw. */
static int Check(JNIEnv* env, int code, const deniable_error* error) {
  if (code == DENIABLE_OK) return 0;
  Throw(env, code, error->message);
  return 1;
}

/* A Java string as C, NULL for null; Release() frees it. */
typedef struct {
  jstring java;
  const char* c;
} Utf;

static int Get(JNIEnv* env, jstring s, Utf* out) {
  out->java = s;
  out->c = NULL;
  if (s == NULL) return 1;
  out->c = (*env)->GetStringUTFChars(env, s, NULL);
  return out->c != NULL; /* NULL: OutOfMemoryError pending */
}

static void Release(JNIEnv* env, Utf* s) {
  if (s->c != NULL) (*env)->ReleaseStringUTFChars(env, s->java, s->c);
  s->c = NULL;
}

/* Labels from two parallel String arrays; frees with FreeLabels(). Returns 0 on a pending
 * exception. */
typedef struct {
  deniable_label* labels;
  Utf* strings; /* 2 per label */
  size_t count;
} Labels;

static void FreeLabels(JNIEnv* env, Labels* l) {
  for (size_t i = 0; l->strings != NULL && i < 2 * l->count; ++i) Release(env, &l->strings[i]);
  free(l->strings);
  free(l->labels);
  l->strings = NULL;
  l->labels = NULL;
}

static int GetLabels(JNIEnv* env, jobjectArray keys, jobjectArray values, Labels* out) {
  out->labels = NULL;
  out->strings = NULL;
  out->count = 0;
  jsize n = keys == NULL ? 0 : (*env)->GetArrayLength(env, keys);
  if (n == 0) return 1;
  if (values == NULL || (*env)->GetArrayLength(env, values) != n) {
    Throw(env, DENIABLE_INVALID_ARGUMENT, "labels: keys and values differ in number");
    return 0;
  }
  /* Each label holds two local references until FreeLabels (Android allows 512 by default). */
  if ((*env)->EnsureLocalCapacity(env, 2 * n + 8) != 0) return 0;
  out->labels = calloc((size_t)n, sizeof(deniable_label));
  out->strings = calloc(2 * (size_t)n, sizeof(Utf));
  if (out->labels == NULL || out->strings == NULL) {
    FreeLabels(env, out);
    Throw(env, DENIABLE_INTERNAL, "labels: out of memory");
    return 0;
  }
  out->count = (size_t)n;
  for (jsize i = 0; i < n; ++i) {
    jstring k = (jstring)(*env)->GetObjectArrayElement(env, keys, i);
    jstring v = (jstring)(*env)->GetObjectArrayElement(env, values, i);
    if (k == NULL || v == NULL) {
      FreeLabels(env, out);
      Throw(env, DENIABLE_INVALID_ARGUMENT, "labels: a key or value is null");
      return 0;
    }
    if (!Get(env, k, &out->strings[2 * i]) || !Get(env, v, &out->strings[2 * i + 1])) {
      FreeLabels(env, out);
      return 0;
    }
    out->labels[i].key = out->strings[2 * i].c;
    out->labels[i].value = out->strings[2 * i + 1].c;
  }
  return 1;
}

static deniable_reporter* Handle(jlong handle) { return (deniable_reporter*)(intptr_t)handle; }

JNIEXPORT jlong JNICALL Java_org_deniable_NativeBridge_open(
    JNIEnv* env, jclass cls, jstring target, jboolean insecure, jstring ca_file,
    jstring client_cert_file, jstring client_key_file, jstring bearer_token, jstring store_path,
    jboolean sync_every_report, jdouble max_epsilon_per_metric, jboolean background_sending,
    jlong send_interval_ms, jlong rpc_timeout_ms, jlong first_design_wait_ms,
    jlong shutdown_drain_ms, jlong max_queued_reports, jint max_batch_reports,
    jobjectArray label_keys, jobjectArray label_values, jboolean one_report_per_period) {
  (void)cls;
  Utf s[6] = {{0}};
  Labels labels = {0};
  jlong result = 0;
  if (!Get(env, target, &s[0]) || !Get(env, ca_file, &s[1]) || !Get(env, client_cert_file, &s[2]) ||
      !Get(env, client_key_file, &s[3]) || !Get(env, bearer_token, &s[4]) ||
      !Get(env, store_path, &s[5])) {
    if (target == NULL) Throw(env, DENIABLE_INVALID_ARGUMENT, "target: must not be null");
    goto done;
  }
  if (!GetLabels(env, label_keys, label_values, &labels)) goto done;
  deniable_reporter_options o;
  deniable_reporter_options_init(&o);
  o.target = s[0].c;
  o.insecure = insecure ? 1 : 0;
  o.ca_file = s[1].c;
  o.client_cert_file = s[2].c;
  o.client_key_file = s[3].c;
  o.bearer_token = s[4].c;
  o.store_path = s[5].c;
  o.sync_every_report = sync_every_report ? 1 : 0;
  o.max_epsilon_per_metric = max_epsilon_per_metric;
  o.background_sending = background_sending ? 1 : 0;
  o.send_interval_ms = send_interval_ms;
  o.rpc_timeout_ms = rpc_timeout_ms;
  o.first_design_wait_ms = first_design_wait_ms;
  o.shutdown_drain_ms = shutdown_drain_ms;
  o.max_queued_reports = max_queued_reports;
  o.max_batch_reports = max_batch_reports;
  o.labels = labels.labels;
  o.label_count = labels.count;
  o.one_report_per_period = one_report_per_period ? 1 : 0;
  deniable_error error;
  deniable_reporter* reporter = NULL;
  if (!Check(env, deniable_reporter_open(&o, &reporter, &error), &error)) {
    result = (jlong)(intptr_t)reporter;
  }
done:
  FreeLabels(env, &labels);
  for (int i = 0; i < 6; ++i) Release(env, &s[i]);
  return result;
}

JNIEXPORT void JNICALL Java_org_deniable_NativeBridge_close(JNIEnv* env, jclass cls, jlong handle) {
  (void)env;
  (void)cls;
  deniable_reporter_close(Handle(handle));
}

JNIEXPORT void JNICALL Java_org_deniable_NativeBridge_prefetch(JNIEnv* env, jclass cls,
                                                               jlong handle, jobjectArray metrics,
                                                               jlong timeout_ms) {
  (void)cls;
  jsize n = (*env)->GetArrayLength(env, metrics);
  if ((*env)->EnsureLocalCapacity(env, n + 8) != 0) return; /* OutOfMemoryError pending */
  Utf* names = calloc((size_t)n + 1, sizeof(Utf));
  const char** c = calloc((size_t)n + 1, sizeof(const char*));
  jsize got = 0;
  if (names == NULL || c == NULL) {
    Throw(env, DENIABLE_INTERNAL, "metrics: out of memory");
    goto done;
  }
  for (; got < n; ++got) {
    jstring m = (jstring)(*env)->GetObjectArrayElement(env, metrics, got);
    if (m == NULL) {
      Throw(env, DENIABLE_INVALID_ARGUMENT, "metrics: a metric name is null");
      goto done;
    }
    if (!Get(env, m, &names[got])) goto done;
    c[got] = names[got].c;
  }
  deniable_error error;
  Check(env, deniable_reporter_prefetch(Handle(handle), c, (size_t)n, timeout_ms, &error), &error);
done:
  for (jsize i = 0; names != NULL && i < got; ++i) Release(env, &names[i]);
  free(names);
  free((void*)c);
}

/* A report call's answer to Java: the queued report's id (empty when nothing was queued), or
 * NULL with the DeniableException thrown for a failed call. */
static jbyteArray IdOrThrow(JNIEnv* env, int code, deniable_error* error, const uint8_t* id,
                            size_t id_size) {
  if (Check(env, code, error)) return NULL;
  jbyteArray result = (*env)->NewByteArray(env, (jsize)id_size);
  if (result != NULL && id_size > 0) {
    (*env)->SetByteArrayRegion(env, result, 0, (jsize)id_size, (const jbyte*)id);
  }
  return result;
}

JNIEXPORT jbyteArray JNICALL Java_org_deniable_NativeBridge_report(
    JNIEnv* env, jclass cls, jlong handle, jstring metric, jboolean answer, jstring category,
    jobjectArray label_keys, jobjectArray label_values) {
  (void)cls;
  Utf m = {0}, cat = {0};
  Labels labels = {0};
  jbyteArray result = NULL;
  if (!Get(env, metric, &m) || !Get(env, category, &cat)) {
    if (metric == NULL) Throw(env, DENIABLE_INVALID_ARGUMENT, "metric: must not be null");
    goto done;
  }
  if (!GetLabels(env, label_keys, label_values, &labels)) goto done;
  uint8_t id[16];
  size_t id_size = 0;
  deniable_error error;
  int code = deniable_reporter_report_labeled(Handle(handle), m.c, answer ? 1 : 0, cat.c,
                                              labels.labels, labels.count, id, &id_size, &error);
  result = IdOrThrow(env, code, &error, id, id_size);
done:
  FreeLabels(env, &labels);
  Release(env, &m);
  Release(env, &cat);
  return result;
}

JNIEXPORT jbyteArray JNICALL Java_org_deniable_NativeBridge_reportValue(
    JNIEnv* env, jclass cls, jlong handle, jstring metric, jdouble value, jobjectArray label_keys,
    jobjectArray label_values) {
  (void)cls;
  Utf m = {0};
  Labels labels = {0};
  jbyteArray result = NULL;
  if (!Get(env, metric, &m)) {
    if (metric == NULL) Throw(env, DENIABLE_INVALID_ARGUMENT, "metric: must not be null");
    goto done;
  }
  if (!GetLabels(env, label_keys, label_values, &labels)) goto done;
  uint8_t id[16];
  size_t id_size = 0;
  deniable_error error;
  int code = deniable_reporter_report_value_labeled(Handle(handle), m.c, value, labels.labels,
                                                    labels.count, id, &id_size, &error);
  result = IdOrThrow(env, code, &error, id, id_size);
done:
  FreeLabels(env, &labels);
  Release(env, &m);
  return result;
}

JNIEXPORT jbyteArray JNICALL Java_org_deniable_NativeBridge_reportString(
    JNIEnv* env, jclass cls, jlong handle, jstring metric, jbyteArray value,
    jobjectArray label_keys, jobjectArray label_values) {
  (void)cls;
  Utf m = {0};
  Labels labels = {0};
  jbyteArray result = NULL;
  uint8_t* bytes = NULL;
  jsize size = 0;
  if (!Get(env, metric, &m)) {
    if (metric == NULL) Throw(env, DENIABLE_INVALID_ARGUMENT, "metric: must not be null");
    goto done;
  }
  if (value == NULL) {
    Throw(env, DENIABLE_INVALID_ARGUMENT, "value: must not be null");
    goto done;
  }
  /* The value's UTF-8 bytes as Java encoded them (String.getBytes, not modified UTF-8, so a
   * NUL stays one byte and the core refuses it). Copied, then wiped before it is freed. */
  size = (*env)->GetArrayLength(env, value);
  bytes = (uint8_t*)malloc(size > 0 ? (size_t)size : 1);
  if (bytes == NULL) {
    Throw(env, DENIABLE_RESOURCE_EXHAUSTED, "value: out of memory");
    goto done;
  }
  (*env)->GetByteArrayRegion(env, value, 0, size, (jbyte*)bytes);
  if ((*env)->ExceptionCheck(env)) goto done;
  if (!GetLabels(env, label_keys, label_values, &labels)) goto done;
  uint8_t id[16];
  size_t id_size = 0;
  deniable_error error;
  int code = deniable_reporter_report_string_labeled(
      Handle(handle), m.c, bytes, (size_t)size, labels.labels, labels.count, id, &id_size, &error);
  result = IdOrThrow(env, code, &error, id, id_size);
done:
  if (bytes != NULL) {
    volatile uint8_t* wipe = bytes;
    for (jsize i = 0; i < size; ++i) wipe[i] = 0;
    free(bytes);
  }
  FreeLabels(env, &labels);
  Release(env, &m);
  return result;
}

JNIEXPORT jbyteArray JNICALL Java_org_deniable_NativeBridge_reportCategoryIndex(
    JNIEnv* env, jclass cls, jlong handle, jstring metric, jint index, jobjectArray label_keys,
    jobjectArray label_values) {
  (void)cls;
  Utf m = {0};
  Labels labels = {0};
  jbyteArray result = NULL;
  if (!Get(env, metric, &m)) {
    if (metric == NULL) Throw(env, DENIABLE_INVALID_ARGUMENT, "metric: must not be null");
    goto done;
  }
  if (!GetLabels(env, label_keys, label_values, &labels)) goto done;
  uint8_t id[16];
  size_t id_size = 0;
  deniable_error error;
  int code = deniable_reporter_report_category_index_labeled(
      Handle(handle), m.c, (int)index, labels.labels, labels.count, id, &id_size, &error);
  result = IdOrThrow(env, code, &error, id, id_size);
done:
  FreeLabels(env, &labels);
  Release(env, &m);
  return result;
}

JNIEXPORT void JNICALL Java_org_deniable_NativeBridge_flush(JNIEnv* env, jclass cls, jlong handle,
                                                            jlong timeout_ms) {
  (void)cls;
  deniable_error error;
  Check(env, deniable_reporter_flush(Handle(handle), timeout_ms, &error), &error);
}

JNIEXPORT jlong JNICALL Java_org_deniable_NativeBridge_pending(JNIEnv* env, jclass cls,
                                                               jlong handle) {
  (void)env;
  (void)cls;
  return (jlong)deniable_reporter_pending(Handle(handle));
}

static jlongArray Longs(JNIEnv* env, const jlong* values, jsize n) {
  jlongArray out = (*env)->NewLongArray(env, n);
  if (out != NULL) (*env)->SetLongArrayRegion(env, out, 0, n, values);
  return out;
}

static jlong Bits(double d) {
  jlong bits;
  memcpy(&bits, &d, sizeof bits);
  return bits;
}

JNIEXPORT jlongArray JNICALL Java_org_deniable_NativeBridge_ledger(JNIEnv* env, jclass cls,
                                                                   jlong handle, jstring metric) {
  (void)cls;
  Utf m = {0};
  jlongArray result = NULL;
  if (!Get(env, metric, &m)) {
    if (metric == NULL) Throw(env, DENIABLE_INVALID_ARGUMENT, "metric: must not be null");
    return NULL;
  }
  deniable_metric_ledger l;
  deniable_error error;
  if (!Check(env, deniable_reporter_ledger(Handle(handle), m.c, &l, &error), &error)) {
    jlong v[8] = {l.reports_accepted,    l.reports_acknowledged,      l.randomizations,
                  Bits(l.epsilon_spent), Bits(l.epsilon_if_fresh),    l.period_start_seconds,
                  l.reports_this_period, l.reports_repeated_in_period};
    result = Longs(env, v, 8);
  }
  Release(env, &m);
  return result;
}

JNIEXPORT jlongArray JNICALL Java_org_deniable_NativeBridge_stats(JNIEnv* env, jclass cls,
                                                                  jlong handle) {
  (void)cls;
  deniable_delivery_stats s;
  deniable_error error;
  if (Check(env, deniable_reporter_stats(Handle(handle), &s, &error), &error)) return NULL;
  jlong v[12] = {s.queued,
                 s.acknowledged,
                 s.duplicates,
                 s.dropped_rejected,
                 s.dropped_queue_full,
                 s.dropped_too_old,
                 s.send_attempts,
                 s.failed_attempts,
                 s.values_clipped,
                 s.dropped_design_mismatch,
                 s.batch_splits,
                 s.kept_after_rejection};
  return Longs(env, v, 12);
}
