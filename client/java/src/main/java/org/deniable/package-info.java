/**
 * The Deniable SDK for the JVM and Android: randomized response on the device, reports queued
 * durably in the app's files directory and sent to the collector over gRPC, through the C API
 * ({@code deniable_c.h}) and JNI. Start with {@link org.deniable.Reporter#builder(String)}.
 *
 * <p>Every parameter and return value is non-null unless annotated {@code @Nullable}
 * (JSR-305, which Kotlin reads as platform nullability).
 */
@ParametersAreNonnullByDefault
package org.deniable;

import javax.annotation.ParametersAreNonnullByDefault;
