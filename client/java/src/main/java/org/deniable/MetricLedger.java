package org.deniable;

/**
 * What this device has reported and spent for one metric (the C API's deniable_metric_ledger;
 * docs/sdk.md). Epsilons are in nats. Immutable.
 */
public final class MetricLedger {
  /** report() calls that queued a report. */
  public final long reportsAccepted;
  /** Of those, committed by the collector. */
  public final long reportsAcknowledged;
  /** Fresh draws of the randomizer (memoized reports draw nothing). */
  public final long randomizations;
  /** Nats: the sum of the design's epsilon over the draws. */
  public final double epsilonSpent;
  /** Nats: what fresh randomization of every report would have spent. */
  public final double epsilonIfFresh;
  /** Unix seconds: the period of the last queued report. */
  public final long periodStartSeconds;
  public final long reportsThisPeriod;
  /** report() calls that queued nothing (ALREADY_REPORTED). */
  public final long reportsRepeatedInPeriod;

  MetricLedger(long[] v) {
    reportsAccepted = v[0];
    reportsAcknowledged = v[1];
    randomizations = v[2];
    epsilonSpent = Double.longBitsToDouble(v[3]);
    epsilonIfFresh = Double.longBitsToDouble(v[4]);
    periodStartSeconds = v[5];
    reportsThisPeriod = v[6];
    reportsRepeatedInPeriod = v[7];
  }

  @Override
  public String toString() {
    return "MetricLedger{accepted=" + reportsAccepted + ", acknowledged=" + reportsAcknowledged
        + ", randomizations=" + randomizations + ", epsilonSpent=" + epsilonSpent
        + ", repeatedInPeriod=" + reportsRepeatedInPeriod + "}";
  }
}
