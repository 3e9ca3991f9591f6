package org.deniable;

/**
 * Delivery figures of a reporter (the C API's deniable_delivery_stats): the counters are
 * persisted in the device store, all metrics together; the attempts count since open.
 * Immutable.
 */
public final class DeliveryStats {
  /** Reports waiting for an acknowledgement (durable on the device). */
  public final long queued;
  public final long acknowledged;
  /** Re-sent reports the collector had stored already (counted once). */
  public final long duplicates;
  /** Dropped because the collector rejected them for good (INVALID_ARGUMENT). */
  public final long droppedRejected;
  public final long droppedQueueFull;
  public final long droppedTooOld;
  public final long sendAttempts;
  public final long failedAttempts;
  /**
   * Numeric metrics: reports whose value was outside the metric's range and was clipped to its
   * nearest end (persisted).
   */
  public final long valuesClipped;
  /**
   * Dropped because the collector rejected them as drawn with a design it does not have under
   * that version (persisted; not counted in droppedRejected).
   */
  public final long droppedDesignMismatch;
  /** Since open: batches halved after a whole-batch INVALID_ARGUMENT. */
  public final long batchSplits;
  /** Since open: reports kept after a per-report rejection with permanent = false. */
  public final long keptAfterRejection;

  DeliveryStats(long[] v) {
    queued = v[0];
    acknowledged = v[1];
    duplicates = v[2];
    droppedRejected = v[3];
    droppedQueueFull = v[4];
    droppedTooOld = v[5];
    sendAttempts = v[6];
    failedAttempts = v[7];
    valuesClipped = v[8];
    droppedDesignMismatch = v[9];
    batchSplits = v[10];
    keptAfterRejection = v[11];
  }

  @Override
  public String toString() {
    return "DeliveryStats{queued=" + queued + ", acknowledged=" + acknowledged + ", duplicates="
        + duplicates + ", droppedRejected=" + droppedRejected + ", droppedQueueFull="
        + droppedQueueFull + ", droppedTooOld=" + droppedTooOld + ", sendAttempts="
        + sendAttempts + ", failedAttempts=" + failedAttempts + ", valuesClipped="
        + valuesClipped + ", droppedDesignMismatch=" + droppedDesignMismatch + ", batchSplits="
        + batchSplits + ", keptAfterRejection=" + keptAfterRejection + "}";
  }
}
