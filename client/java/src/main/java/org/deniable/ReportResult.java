package org.deniable;

import java.util.Arrays;
import javax.annotation.Nonnull;
import javax.annotation.Nullable;

/**
 * What {@link Reporter#report} did: a randomized report was queued durably on the device
 * ({@link Outcome#QUEUED}, with its 16-byte id), or this metric's report of the current
 * reporting period was queued already, so nothing was queued or sent
 * ({@link Outcome#ALREADY_REPORTED}; the contract the estimates rely on: one report per device
 * per metric per period). Immutable.
 */
public final class ReportResult {
  /** The two outcomes of a report call that succeeded. */
  public enum Outcome {
    QUEUED,
    ALREADY_REPORTED
  }

  private final String metric;
  @Nullable private final byte[] reportId;

  ReportResult(String metric, @Nullable byte[] reportId) {
    this.metric = metric;
    this.reportId = reportId == null || reportId.length == 0 ? null : reportId.clone();
  }

  @Nonnull
  public Outcome outcome() {
    return reportId == null ? Outcome.ALREADY_REPORTED : Outcome.QUEUED;
  }

  /** True when a report was queued (it will be sent); false for ALREADY_REPORTED. */
  public boolean queued() {
    return reportId != null;
  }

  @Nonnull
  public String metric() {
    return metric;
  }

  /** The random 16-byte id of the queued report; null for ALREADY_REPORTED. */
  @Nullable
  public byte[] reportId() {
    return reportId == null ? null : reportId.clone();
  }

  @Override
  public String toString() {
    if (reportId == null) {
      return "metric \"" + metric + "\": already reported this period; nothing sent";
    }
    StringBuilder hex = new StringBuilder();
    for (byte b : reportId) hex.append(String.format("%02x", b & 0xff));
    return "metric \"" + metric + "\": report queued (id " + hex + ")";
  }

  @Override
  public boolean equals(@Nullable Object other) {
    return other instanceof ReportResult
        && ((ReportResult) other).metric.equals(metric)
        && Arrays.equals(((ReportResult) other).reportId, reportId);
  }

  @Override
  public int hashCode() {
    return metric.hashCode() * 31 + Arrays.hashCode(reportId);
  }
}
