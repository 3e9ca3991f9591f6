// The first report with the JVM SDK, as docs/sdk.md ("Java / Kotlin") shows it: compiled by
// the build (deniable-sample.jar) and run against a real server by CTest jvm_sdk.
import java.io.File;
import org.deniable.ReportResult;
import org.deniable.Reporter;

public final class FirstReport {
  public static void main(String[] args) {
    // Development mode: plaintext to $DENIABLE_TARGET or 127.0.0.1:50051; the store in a
    // directory of this app (on Android: context.getFilesDir()).
    try (Reporter reporter = Reporter.local(new File("dev-device"))) {
      ReportResult first = reporter.report("first_metric", true);
      System.out.println(first); // metric "first_metric": report queued (id ...)
      ReportResult again = reporter.report("first_metric", false);
      System.out.println(again); // ... already reported this period; nothing sent
      reporter.flush(10_000); // sends now; the background sender would within 200 ms
      System.out.println(reporter.stats()); // DeliveryStats{queued=0, acknowledged=1, ...}
    }
  }
}
