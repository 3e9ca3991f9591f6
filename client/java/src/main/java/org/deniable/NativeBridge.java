package org.deniable;

import javax.annotation.Nullable;

/**
 * The JNI functions over the C API (client/java/jni/deniable_jni.c). Each failing call throws
 * {@link DeniableException} with the C API's code and message. Handles are deniable_reporter
 * pointers; {@link Reporter} owns them and guards their use against close().
 */
final class NativeBridge {
  static {
    // -Ddeniable.jni.library=/path/libdeniable_jni.so (tests, a JVM app that ships the library
    // in its own directory); otherwise java.library.path / the APK's jni/<abi>/ directory.
    // libdeniable_jni.so finds libdeniable_c.so beside it (RUNPATH $ORIGIN; on Android the
    // linker resolves it from the app's native library directory, API 23+).
    // A failure says which property to set, not only the JVM's "no deniable_jni in
    // java.library.path".
    String path = System.getProperty("deniable.jni.library");
    try {
      if (path != null && !path.isEmpty()) {
        System.load(path);
      } else {
        System.loadLibrary("deniable_jni");
      }
    } catch (UnsatisfiedLinkError e) {
      UnsatisfiedLinkError explained = new UnsatisfiedLinkError(loadFailure(path, e.getMessage()));
      explained.initCause(e);
      throw explained;
    }
  }

  /** What to do when libdeniable_jni.so did not load (`path`: -Ddeniable.jni.library, or null). */
  static String loadFailure(@Nullable String path, @Nullable String cause) {
    String where =
        " (in a build tree build/client/java/libdeniable_jni.so; installed,"
            + " PREFIX/lib/libdeniable_jni.so beside libdeniable_c.so)";
    if (path != null && !path.isEmpty()) {
      return "org.deniable: cannot load the JNI library -Ddeniable.jni.library="
          + path
          + " ("
          + cause
          + "): give the path of libdeniable_jni.so"
          + where;
    }
    return "org.deniable: libdeniable_jni.so is not on java.library.path ("
        + System.getProperty("java.library.path")
        + "): give its path with -Ddeniable.jni.library=/path/to/libdeniable_jni.so"
        + where
        + ", or its directory with -Djava.library.path=DIR";
  }

  private NativeBridge() {}

  static native long open(
      String target,
      boolean insecure,
      @Nullable String caFile,
      @Nullable String clientCertFile,
      @Nullable String clientKeyFile,
      @Nullable String bearerToken,
      @Nullable String storePath,
      boolean syncEveryReport,
      double maxEpsilonPerMetric,
      boolean backgroundSending,
      long sendIntervalMs,
      long rpcTimeoutMs,
      long firstDesignWaitMs,
      long shutdownDrainMs,
      long maxQueuedReports,
      int maxBatchReports,
      String[] labelKeys,
      String[] labelValues,
      boolean oneReportPerPeriod);

  static native void close(long handle);

  static native void prefetch(long handle, String[] metrics, long timeoutMs);

  /** The report id (16 bytes), or an empty array when nothing was queued (ALREADY_REPORTED). */
  static native byte[] report(
      long handle,
      String metric,
      boolean answer,
      @Nullable String category,
      String[] labelKeys,
      String[] labelValues);

  /** As report, for a category given by its index in the metric's order. */
  static native byte[] reportCategoryIndex(
      long handle, String metric, int index, String[] labelKeys, String[] labelValues);

  /** As report, for a numeric metric's value. */
  static native byte[] reportValue(
      long handle, String metric, double value, String[] labelKeys, String[] labelValues);

  /** As report, for a heavy-hitters metric's string, as its UTF-8 bytes. */
  static native byte[] reportString(
      long handle, String metric, byte[] value, String[] labelKeys, String[] labelValues);

  static native void flush(long handle, long timeoutMs);

  static native long pending(long handle);

  /** The 8 fields of deniable_metric_ledger; the two epsilons as Double.doubleToRawLongBits. */
  static native long[] ledger(long handle, String metric);

  /** The 9 fields of deniable_delivery_stats. */
  static native long[] stats(long handle);
}
