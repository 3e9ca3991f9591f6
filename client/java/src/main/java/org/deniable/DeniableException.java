package org.deniable;

import javax.annotation.Nonnull;

/**
 * A failed call: the status code and a message naming the field or the cause (never a true
 * answer). Unchecked, so Kotlin and Java callers handle it where they choose.
 *
 * <p>Which codes a call returns is documented on the call; the delivery contract (docs/sdk.md)
 * decides what happens to queued reports: only {@link StatusCode#INVALID_ARGUMENT} from the
 * collector drops a report.
 */
public final class DeniableException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final StatusCode code;

  public DeniableException(StatusCode code, String message) {
    super(code.name() + ": " + message);
    this.code = code;
  }

  /** Called from the JNI shim with the C API's code number. */
  DeniableException(int code, String message) {
    this(StatusCode.of(code), message);
  }

  @Nonnull
  public StatusCode code() {
    return code;
  }
}
