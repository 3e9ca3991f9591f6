package org.deniable;

import java.io.Closeable;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import javax.annotation.Nonnull;
import javax.annotation.Nullable;

/**
 * Reports yes/no and categorical answers and numeric values with randomized response: the true
 * answer is
 * randomized on the device (OpenSSL's secure generator, in the C++ core) and only the randomized
 * report leaves it. Reports are committed to the device store (a SQLite file in the directory
 * the app gives: {@code Context.getFilesDir()} on Android) before report() returns, and sent by
 * a background thread under the delivery contract of docs/sdk.md.
 *
 * <pre>{@code
 * try (Reporter reporter = Reporter.builder("collector.example:443")
 *         .caFile("/etc/deniable/ca.pem")
 *         .bearerToken(token)
 *         .storeDirectory(context.getFilesDir())
 *         .build()) {
 *   ReportResult r = reporter.report("uses_drugs", true);  // QUEUED or ALREADY_REPORTED
 *   reporter.reportValue("load_ms", 183.0);                 // a numeric metric
 *   reporter.reportString("crash_sig", "oom@render");        // a heavy-hitters metric
 * }
 * }</pre>
 *
 * <p>Thread safety: every method may be called from any number of threads at once; close()
 * waits for calls in progress, and calls after it throw FAILED_PRECONDITION. One reporter per
 * store directory (per process). Errors are {@link DeniableException} with the code each method
 * names.
 *
 * <p>{@link Closeable} (an {@link AutoCloseable} whose close() throws nothing here), so that
 * Kotlin's {@code use { }} applies with the plain standard library, not only kotlin-stdlib-jdk7.
 */
public final class Reporter implements Closeable {
  /** The file kept in the store directory: the queue, the memoized bits and the ledger. */
  public static final String STORE_FILE_NAME = "deniable.db";

  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private long handle; // guarded by lock; 0 once closed

  private Reporter(long handle) {
    this.handle = handle;
  }

  /** A builder for a reporter sending to the collector's gRPC port, "host:port". */
  @Nonnull
  public static Builder builder(String target) {
    return new Builder(target);
  }

  /**
   * Development mode: a reporter in plaintext to a local collector, at $DENIABLE_TARGET or
   * 127.0.0.1:50051 (as the CLI), its store in {@code storeDirectory}. Local development only:
   * production uses {@link #builder(String)} with TLS and a token. Errors: as Builder.build().
   */
  @Nonnull
  public static Reporter local(File storeDirectory) {
    String target = System.getenv("DENIABLE_TARGET");
    if (target == null || target.isEmpty()) target = "127.0.0.1:50051";
    return builder(target).insecure().storeDirectory(storeDirectory).build();
  }

  /**
   * Randomizes {@code answer} with the metric's design (or takes its memoized bit) and queues
   * the report durably. ALREADY_REPORTED when this metric's report of the current period is
   * queued already (nothing queued, nothing sent). Errors (nothing queued): INVALID_ARGUMENT
   * (metric empty); NOT_FOUND, UNAVAILABLE or DEADLINE_EXCEEDED fetching the design of a metric
   * never seen (bounded by firstDesignWaitMillis); FAILED_PRECONDITION for a metric with
   * categories; INVALID_ARGUMENT naming "metric" for a numeric metric (use reportValue);
   * RESOURCE_EXHAUSTED past maxEpsilonPerMetric.
   */
  @Nonnull
  public ReportResult report(String metric, boolean answer) {
    return report(metric, answer, Collections.emptyMap());
  }

  /**
   * {@link #report(String, boolean)} with public labels for this report only, added to the
   * builder's labels (a key in both takes the value given here). Sent in the clear: never
   * identifying or free-text values. INVALID_ARGUMENT naming "labels" for a label the collector
   * would refuse.
   */
  @Nonnull
  public ReportResult report(String metric, boolean answer, Map<String, String> labels) {
    return queue(metric, labels, (handle, keys, values) ->
        NativeBridge.report(handle, metric, answer, null, keys, values));
  }

  /**
   * Reports the true category {@code category} (one of the metric's category names, case
   * sensitive) of a metric with categories, randomized with its categorical design. Errors: as
   * report(), INVALID_ARGUMENT for a name that is not one of the categories (the message lists
   * them, never the value passed), FAILED_PRECONDITION for a yes/no metric.
   */
  @Nonnull
  public ReportResult reportCategory(String metric, String category) {
    return reportCategory(metric, category, Collections.emptyMap());
  }

  /** {@link #reportCategory(String, String)} with labels for this report only. */
  @Nonnull
  public ReportResult reportCategory(String metric, String category, Map<String, String> labels) {
    if (category.isEmpty()) {
      throw new DeniableException(StatusCode.INVALID_ARGUMENT, "category: must not be empty");
    }
    return queue(metric, labels, (handle, keys, values) ->
        NativeBridge.report(handle, metric, false, category, keys, values));
  }

  /**
   * {@link #reportCategory(String, String)} with the true category given by its index in the
   * metric's order (0 &lt;= index &lt; k; the collector's order of the category names): the same
   * report as by name. Errors: as reportCategory, INVALID_ARGUMENT "category: index must be in
   * [0, k) for metric ..." for an index outside the range.
   */
  @Nonnull
  public ReportResult reportCategoryIndex(String metric, int index) {
    return reportCategoryIndex(metric, index, Collections.emptyMap());
  }

  /** {@link #reportCategoryIndex(String, int)} with labels for this report only. */
  @Nonnull
  public ReportResult reportCategoryIndex(String metric, int index, Map<String, String> labels) {
    return queue(metric, labels, (handle, keys, values) ->
        NativeBridge.reportCategoryIndex(handle, metric, index, keys, values));
  }

  /**
   * Reports {@code value}, the true value of a numeric metric (in the metric's unit), randomized
   * with its numeric design (1BitMean or dBitFlip). The value is clipped to the metric's range
   * (counted in {@link DeliveryStats#valuesClipped}, not refused) and rounded to its level
   * (alpha-point rounding with an alpha drawn once per metric and kept in the store, or its
   * bucket); the report memoized for that level is sent, or one is drawn for it (the design's
   * epsilon spent once per distinct level). The value is never stored, logged or sent. Errors:
   * as report(), INVALID_ARGUMENT naming "value" for NaN and "metric" for a metric that is not
   * numeric.
   */
  @Nonnull
  public ReportResult reportValue(String metric, double value) {
    return reportValue(metric, value, Collections.emptyMap());
  }

  /** {@link #reportValue(String, double)} with labels for this report only. */
  @Nonnull
  public ReportResult reportValue(String metric, double value, Map<String, String> labels) {
    return queue(metric, labels, (handle, keys, values) ->
        NativeBridge.reportValue(handle, metric, value, keys, values));
  }

  /**
   * Reports {@code value}, the true string of a heavy-hitters metric, as its UTF-8 bytes (at
   * most the design's max_length bytes, no NUL character), randomized with the metric's
   * heavy-hitters design for this device's group (drawn once per design and kept in the store).
   * The report memoized for that value is sent, or one is drawn for it (the design's epsilon
   * spent once per distinct value); the store keeps a SHA-256 of the value, never the value,
   * and it is never logged or sent. Errors: as report(), FAILED_PRECONDITION naming the
   * metric's kind for a metric that is not heavy_hitters (and report, reportCategory,
   * reportCategoryIndex and reportValue throw FAILED_PRECONDITION naming "heavy_hitters" for a
   * heavy-hitters metric), INVALID_ARGUMENT naming "value" for a value too long or holding a
   * NUL (the message gives its length and the limit, or the NUL's offset, never the value).
   */
  @Nonnull
  public ReportResult reportString(String metric, String value) {
    return reportString(metric, value, Collections.emptyMap());
  }

  /** {@link #reportString(String, String)} with labels for this report only. */
  @Nonnull
  public ReportResult reportString(String metric, String value, Map<String, String> labels) {
    byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
    try {
      return queue(metric, labels, (handle, keys, values) ->
          NativeBridge.reportString(handle, metric, bytes, keys, values));
    } finally {
      Arrays.fill(bytes, (byte) 0);  // the true value's copy, wiped
    }
  }

  /**
   * Fetches and caches the designs of {@code metrics} (each call bounded by timeoutMillis), so
   * that report() needs no network for them. Throws the first error (NOT_FOUND for an unknown
   * metric, UNAVAILABLE, DEADLINE_EXCEEDED); the other metrics are still fetched.
   */
  public void prefetch(Collection<String> metrics, long timeoutMillis) {
    String[] names = metrics.toArray(new String[0]);
    lock.readLock().lock();
    try {
      NativeBridge.prefetch(open(), names, timeoutMillis);
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Sends queued reports on the calling thread until the queue is empty, timeoutMillis passed
   * (DEADLINE_EXCEEDED; negative: no limit), or the retry policy gave up (the last failure's
   * code: UNAVAILABLE when the collector is down; the reports stay queued). Throws
   * INVALID_ARGUMENT (after the queue is empty) when the collector rejected a report for good:
   * that report was dropped and counted in {@link DeliveryStats#droppedRejected}. Blocks: not
   * on Android's main thread.
   */
  public void flush(long timeoutMillis) {
    lock.readLock().lock();
    try {
      NativeBridge.flush(open(), timeoutMillis);
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Reports queued and not yet acknowledged. */
  public long pending() {
    lock.readLock().lock();
    try {
      return NativeBridge.pending(open());
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The ledger of one metric; all zeros for a metric this device never reported. */
  @Nonnull
  public MetricLedger ledger(String metric) {
    lock.readLock().lock();
    try {
      return new MetricLedger(NativeBridge.ledger(open(), metric));
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Delivery figures (queue, acknowledged, drops by reason, attempts). */
  @Nonnull
  public DeliveryStats stats() {
    lock.readLock().lock();
    try {
      return new DeliveryStats(NativeBridge.stats(open()));
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Stops the sender and sends what is queued for at most shutdownDrainMillis; what is left
   * stays in the store and is sent by the next reporter on the same directory. Idempotent.
   */
  @Override
  public void close() {
    lock.writeLock().lock();
    try {
      if (handle != 0) {
        NativeBridge.close(handle);
        handle = 0;
      }
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** One native report call: (handle, label keys, label values) to the queued report's id. */
  private interface NativeReport {
    byte[] call(long handle, String[] keys, String[] values);
  }

  /** Runs {@code report} under the read lock with the labels split; the outcome for metric. */
  private ReportResult queue(String metric, Map<String, String> labels, NativeReport report) {
    String[][] kv = split(labels);
    byte[] id;
    lock.readLock().lock();
    try {
      id = report.call(open(), kv[0], kv[1]);
    } finally {
      lock.readLock().unlock();
    }
    return new ReportResult(metric, id);
  }

  private long open() {
    if (handle == 0) {
      throw new DeniableException(StatusCode.FAILED_PRECONDITION, "reporter: closed");
    }
    return handle;
  }

  private static String[][] split(Map<String, String> labels) {
    String[] keys = new String[labels.size()];
    String[] values = new String[labels.size()];
    int i = 0;
    for (Map.Entry<String, String> e : new TreeMap<>(labels).entrySet()) {
      keys[i] = e.getKey();
      values[i] = e.getValue();
      ++i;
    }
    return new String[][] {keys, values};
  }

  /**
   * Options of a reporter; the defaults are the C API's (docs/sdk.md). Durations are in
   * milliseconds. Not thread-safe; build() may be called more than once (one reporter per
   * store directory at a time).
   */
  public static final class Builder {
    private final String target;
    private boolean insecure;
    @Nullable private String caFile;
    @Nullable private String clientCertFile;
    @Nullable private String clientKeyFile;
    @Nullable private String bearerToken;
    @Nullable private File storeDirectory;
    private boolean inMemory;
    private boolean syncEveryReport = true;
    private double maxEpsilonPerMetric;
    private boolean backgroundSending = true;
    private long sendIntervalMillis = 200;
    private long rpcTimeoutMillis = 10_000;
    private long firstDesignWaitMillis = 2_000;
    private long shutdownDrainMillis = 2_000;
    private long maxQueuedReports = 100_000;
    private int maxBatchReports = 1_000;
    private final Map<String, String> labels = new TreeMap<>();
    private boolean oneReportPerPeriod = true;

    private Builder(String target) {
      this.target = target;
    }

    /** Plaintext gRPC: local development only (a collector without --tls_cert). */
    @Nonnull
    public Builder insecure() {
      this.insecure = true;
      return this;
    }

    /** TLS: PEM roots of the collector's certificate (default: gRPC's default roots). */
    @Nonnull
    public Builder caFile(String path) {
      this.caFile = path;
      return this;
    }

    /** Mutual TLS: the device's certificate and key, PEM files. */
    @Nonnull
    public Builder clientCertificate(String certFile, String keyFile) {
      this.clientCertFile = certFile;
      this.clientKeyFile = keyFile;
      return this;
    }

    /** Sent as "authorization: Bearer ..." (TLS only). */
    @Nonnull
    public Builder bearerToken(String token) {
      this.bearerToken = token;
      return this;
    }

    /**
     * The directory of the device store (created if absent; the file {@value
     * #STORE_FILE_NAME}, mode 0600, inside). On Android: {@code context.getFilesDir()}, private
     * to the app (the memoized bits are sensitive). Required unless inMemoryStoreForTests().
     */
    @Nonnull
    public Builder storeDirectory(File directory) {
      this.storeDirectory = directory;
      return this;
    }

    /** A store in memory, lost at close (queued reports too): tests only. */
    @Nonnull
    public Builder inMemoryStoreForTests() {
      this.inMemory = true;
      return this;
    }

    /** true (default): each report synced to disk (survives power loss, not only a crash). */
    @Nonnull
    public Builder syncEveryReport(boolean sync) {
      this.syncEveryReport = sync;
      return this;
    }

    /** Nats over the device's life per metric; 0 (default): no cap (see docs/sdk.md). */
    @Nonnull
    public Builder maxEpsilonPerMetric(double nats) {
      this.maxEpsilonPerMetric = nats;
      return this;
    }

    /** true (default): a sender thread sends every sendIntervalMillis; false: flush() only. */
    @Nonnull
    public Builder backgroundSending(boolean enabled) {
      this.backgroundSending = enabled;
      return this;
    }

    @Nonnull
    public Builder sendIntervalMillis(long ms) {
      this.sendIntervalMillis = ms;
      return this;
    }

    /** The deadline of each call to the collector (default 10 000). */
    @Nonnull
    public Builder rpcTimeoutMillis(long ms) {
      this.rpcTimeoutMillis = ms;
      return this;
    }

    /** How long report() may fetch the design of a metric never seen (default 2 000). */
    @Nonnull
    public Builder firstDesignWaitMillis(long ms) {
      this.firstDesignWaitMillis = ms;
      return this;
    }

    /** How long close() sends what is queued (default 2 000); the rest stays in the store. */
    @Nonnull
    public Builder shutdownDrainMillis(long ms) {
      this.shutdownDrainMillis = ms;
      return this;
    }

    @Nonnull
    public Builder maxQueuedReports(long reports) {
      this.maxQueuedReports = reports;
      return this;
    }

    @Nonnull
    public Builder maxBatchReports(int reports) {
      this.maxBatchReports = reports;
      return this;
    }

    /** A public label on every report (for example "app_version", "2.1"); never identifying. */
    @Nonnull
    public Builder label(String key, String value) {
      this.labels.put(key, value);
      return this;
    }

    /**
     * true (default): one report per metric per reporting period, the contract the estimates
     * rely on. false only for load tests and simulations (one reporter standing for many
     * devices).
     */
    @Nonnull
    public Builder oneReportPerPeriod(boolean enabled) {
      this.oneReportPerPeriod = enabled;
      return this;
    }

    /**
     * Opens the reporter: the store and the sender thread; does not contact the collector.
     * Errors: INVALID_ARGUMENT naming the field (no store directory, an option out of range,
     * a label the collector would refuse); NOT_FOUND for an unreadable PEM file; UNAVAILABLE
     * when the store cannot be opened; DATA_LOSS when the file is not a device store.
     */
    @Nonnull
    public Reporter build() {
      String storePath = null;
      if (!inMemory) {
        if (storeDirectory == null) {
          throw new DeniableException(
              StatusCode.INVALID_ARGUMENT,
              "storeDirectory: required (the app's files directory; Context.getFilesDir() on"
                  + " Android), or inMemoryStoreForTests()");
        }
        if (!storeDirectory.isDirectory() && !storeDirectory.mkdirs()) {
          throw new DeniableException(
              StatusCode.UNAVAILABLE, "storeDirectory: cannot create " + storeDirectory);
        }
        storePath = new File(storeDirectory, STORE_FILE_NAME).getPath();
      }
      String[][] kv = split(labels);
      return new Reporter(
          NativeBridge.open(
              target,
              insecure,
              caFile,
              clientCertFile,
              clientKeyFile,
              bearerToken,
              storePath,
              syncEveryReport,
              maxEpsilonPerMetric,
              backgroundSending,
              sendIntervalMillis,
              rpcTimeoutMillis,
              firstDesignWaitMillis,
              shutdownDrainMillis,
              maxQueuedReports,
              maxBatchReports,
              kv[0],
              kv[1],
              oneReportPerPeriod));
    }
  }
}
