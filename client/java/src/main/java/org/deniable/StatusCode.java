package org.deniable;

import javax.annotation.Nonnull;

/** The status codes of gRPC and absl::StatusCode, with the same numbers as the C API's. */
public enum StatusCode {
  OK,
  CANCELLED,
  UNKNOWN,
  INVALID_ARGUMENT,
  DEADLINE_EXCEEDED,
  NOT_FOUND,
  ALREADY_EXISTS,
  PERMISSION_DENIED,
  RESOURCE_EXHAUSTED,
  FAILED_PRECONDITION,
  ABORTED,
  OUT_OF_RANGE,
  UNIMPLEMENTED,
  INTERNAL,
  UNAVAILABLE,
  DATA_LOSS,
  UNAUTHENTICATED;

  /** The code with this number; UNKNOWN for a number that is no code. */
  @Nonnull
  public static StatusCode of(int number) {
    StatusCode[] all = values();
    return number >= 0 && number < all.length ? all[number] : UNKNOWN;
  }
}
