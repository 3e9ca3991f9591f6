package org.deniable;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The JVM SDK against the real deniable-server, driven by tests/interop/jvm_sdk_test.py, which
 * starts the server, creates the metrics and answers this program's "CONTROL ..." lines on
 * stdout (stop / start the server on the same port, the server's count of a metric). Plain Java:
 * each check exits non-zero with its message.
 *
 * <p>Usage: JvmSdkTest contract TARGET WORK_DIR | JvmSdkTest matrix TARGET METRIC DEVICES SHARE |
 * JvmSdkTest options TARGET CASES_FILE
 */
public final class JvmSdkTest {
  private static final BufferedReader CONTROL =
      new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));

  private static void check(boolean ok, Object what) {
    if (!ok) {
      System.out.println("FAILED: " + what);
      System.out.flush();
      System.exit(1);
    }
  }

  /** Asks the driver; returns its one-line answer. */
  private static String control(String command) throws IOException {
    System.out.println("CONTROL " + command);
    System.out.flush();
    String answer = CONTROL.readLine();
    check(answer != null, "the driver closed stdin after " + command);
    return answer;
  }

  private static long serverCount(String metric) throws IOException {
    return Long.parseLong(control("count " + metric));
  }

  /** "home=3 settings=3": the server's n per value of the label. */
  private static String serverGroups(String metric, String label) throws IOException {
    return control("groups " + metric + " " + label);
  }

  private static DeniableException expectError(StatusCode code, Runnable body) {
    try {
      body.run();
    } catch (DeniableException e) {
      check(e.code() == code, "expected " + code + ", got " + e.getMessage());
      return e;
    }
    check(false, "expected " + code + ", the call succeeded");
    return null;
  }

  private static Reporter.Builder device(String target, File dir) {
    return Reporter.builder(target).insecure().storeDirectory(dir).label("lang", "java");
  }

  public static void main(String[] args) throws Exception {
    if (args.length >= 3 && args[0].equals("contract")) {
      contract(args[1], new File(args[2]));
    } else if (args.length == 3 && args[0].equals("options")) {
      options(args[1], new File(args[2]));
    } else if (args.length == 5 && args[0].equals("matrix")) {
      matrix(args[1], args[2], Integer.parseInt(args[3]), Double.parseDouble(args[4]));
    } else {
      System.err.println(
          "usage: JvmSdkTest contract TARGET WORK_DIR | matrix TARGET METRIC N SHARE | "
              + "options TARGET CASES_FILE");
      System.exit(2);
    }
  }

  /**
   * The shared table of per-report options (tests/conformance/report_options.json), as
   * tests/interop/jvm_sdk_test.py writes it for this program: a line "LABELS" followed by the
   * reporter's labels as key and value fields, then per case "CASE name metric kind argument
   * labeled key value ...", tab-separated (kind: bool, category, category_index or value;
   * labeled 1 for the call with labels). Prints "RESULT name CODE message" per case (OK and a
   * 16-byte report id, or the exception's code and message) for the driver to check against the
   * table, then flushes so that the driver can count what the server stored.
   */
  private static void options(String target, File cases) throws IOException {
    List<String[]> lines = new ArrayList<>();
    for (String line : java.nio.file.Files.readAllLines(cases.toPath(), StandardCharsets.UTF_8)) {
      lines.add(line.split("\t", -1));
    }
    check(lines.size() > 1 && lines.get(0)[0].equals("LABELS"), "cases file: " + cases);
    Reporter.Builder builder =
        Reporter.builder(target)
            .insecure()
            .inMemoryStoreForTests()
            .backgroundSending(false)
            .oneReportPerPeriod(false);  // every case's report counts
    String[] wide = lines.get(0);
    for (int i = 1; i + 1 < wide.length; i += 2) builder.label(wide[i], wide[i + 1]);
    try (Reporter r = builder.build()) {
      for (String[] c : lines.subList(1, lines.size())) {
        check(c.length >= 6 && c[0].equals("CASE"), Arrays.toString(c));
        String name = c[1];
        String metric = c[2];
        String kind = c[3];
        String arg = c[4];
        boolean labeled = c[5].equals("1");
        Map<String, String> labels = new TreeMap<>();
        for (int i = 6; i + 1 < c.length; i += 2) labels.put(c[i], c[i + 1]);
        String outcome;
        try {
          ReportResult result;
          switch (kind) {
            case "bool":
              boolean answer = Boolean.parseBoolean(arg);
              result = labeled ? r.report(metric, answer, labels) : r.report(metric, answer);
              break;
            case "category":
              result =
                  labeled ? r.reportCategory(metric, arg, labels) : r.reportCategory(metric, arg);
              break;
            case "category_index":
              int index = Integer.parseInt(arg);
              result =
                  labeled
                      ? r.reportCategoryIndex(metric, index, labels)
                      : r.reportCategoryIndex(metric, index);
              break;
            default:
              double value = Double.parseDouble(arg);  // "NaN" parses as NaN
              result =
                  labeled ? r.reportValue(metric, value, labels) : r.reportValue(metric, value);
          }
          check(result.queued(), name + ": OK without a queued report");
          outcome = "OK\t";
        } catch (DeniableException e) {
          String prefix = e.code().name() + ": ";
          String message = e.getMessage();
          outcome =
              e.code().name()
                  + "\t"
                  + (message.startsWith(prefix) ? message.substring(prefix.length()) : message);
        }
        System.out.println("RESULT\t" + name + "\t" + outcome);
      }
      r.flush(20_000);
      check(r.pending() == 0, "queued after flush: " + r.pending());
    }
    System.out.println("jvm_sdk options: done");
  }

  /** Interop matrix: `devices` devices, device i answering yes when i < devices * share. */
  private static void matrix(String target, String metric, int devices, double share) {
    long acknowledged = 0;
    for (int i = 0; i < devices; ++i) {
      try (Reporter r =
          Reporter.builder(target)
              .insecure()
              .inMemoryStoreForTests()
              .backgroundSending(false)
              .label("lang", "jvm")
              .build()) {
        check(r.report(metric, i < devices * share).queued(), "device " + i);
        r.flush(10_000);
        acknowledged += r.ledger(metric).reportsAcknowledged;
      }
    }
    System.out.println("{\"acknowledged\": " + acknowledged + "}");
  }

  private static void contract(String target, File work) throws Exception {
    // 1. Errors name the field; nothing is opened or queued.
    DeniableException e =
        expectError(StatusCode.INVALID_ARGUMENT, () -> Reporter.builder(target).build());
    check(e.getMessage().contains("storeDirectory"), e.getMessage());
    e =
        expectError(
            StatusCode.INVALID_ARGUMENT,
            () -> device(target, new File(work, "bad")).label("Bad Key", "x").build());
    check(e.getMessage().contains("labels"), e.getMessage());
    try (Reporter r = device(target, new File(work, "errors")).build()) {
      expectError(StatusCode.NOT_FOUND, () -> r.report("no_such_metric", true));
      e = expectError(StatusCode.INVALID_ARGUMENT, () -> r.report("", true));
      check(e.getMessage().contains("metric"), e.getMessage());
      Map<String, String> nullValue = new TreeMap<>();
      nullValue.put("screen", null); // what a Kotlin caller cannot pass, a Java one can
      e = expectError(StatusCode.INVALID_ARGUMENT, () -> r.report("jvm_count", true, nullValue));
      check(e.getMessage().contains("labels"), e.getMessage());
      e =
          expectError(
              StatusCode.INVALID_ARGUMENT,
              () -> r.report("jvm_count", true, Map.of("Bad Key", "x")));
      check(e.getMessage().contains("labels"), e.getMessage());
      expectError(
          StatusCode.NOT_FOUND, () -> r.prefetch(List.of("jvm_count", "no_such_metric"), 5_000));
      check(r.pending() == 0, r.pending());
    }

    // 2. Counted exactly: N devices, each its own store directory, one report each.
    final int n = 40;
    for (int i = 0; i < n; ++i) {
      try (Reporter r = device(target, new File(work, "count-" + i)).build()) {
        ReportResult result = r.report("jvm_count", i < 12);
        check(result.outcome() == ReportResult.Outcome.QUEUED, result);
        byte[] id = result.reportId();
        check(id != null && id.length == 16, Arrays.toString(id));
        r.flush(10_000);
        MetricLedger ledger = r.ledger("jvm_count");
        check(ledger.reportsAcknowledged == 1 && ledger.randomizations == 1, ledger);
        check(Math.abs(ledger.epsilonSpent - 1.0) < 1e-9, ledger);
      }
    }
    check(serverCount("jvm_count") == n, "server n of jvm_count");

    // 3. ALREADY_REPORTED: device 0 again, this period (after a restart of the reporter).
    try (Reporter r = device(target, new File(work, "count-0")).build()) {
      ReportResult again = r.report("jvm_count", false);
      check(again.outcome() == ReportResult.Outcome.ALREADY_REPORTED, again);
      check(!again.queued() && again.reportId() == null, again);
      check(
          again.toString().contains("already reported this period; nothing sent"),
          again.toString());
      check(r.pending() == 0, r.pending());
      check(r.ledger("jvm_count").reportsRepeatedInPeriod == 1, r.ledger("jvm_count"));
      r.flush(10_000);
    }
    check(serverCount("jvm_count") == n, "nothing more was sent");

    // 4. A categorical report: the true category by name, its errors.
    String[] votes = {"Y", "N", "U", "A", "Y", "N", "Y", "Y"};
    for (int i = 0; i < votes.length; ++i) {
      try (Reporter r = device(target, new File(work, "vote-" + i)).build()) {
        if (i == 0) {
          e = expectError(StatusCode.INVALID_ARGUMENT, () -> r.reportCategory("jvm_vote", "Maybe"));
          check(e.getMessage().contains("category"), e.getMessage());
          check(!e.getMessage().contains("Maybe"), e.getMessage()); // a true answer never echoed
          // Each names the Java call to make, not only the C++ one.
          e = expectError(StatusCode.FAILED_PRECONDITION, () -> r.report("jvm_vote", true));
          check(e.getMessage().contains("Java, Kotlin: reportCategory"), e.getMessage());
          e = expectError(StatusCode.FAILED_PRECONDITION, () -> r.reportCategory("jvm_count", "Y"));
          check(e.getMessage().contains("Java, Kotlin: report)"), e.getMessage());
        }
        check(r.reportCategory("jvm_vote", votes[i]).queued(), "vote " + i);
        r.flush(10_000);
      }
    }
    check(serverCount("jvm_vote") == votes.length, "server n of jvm_vote");

    // 4b. A numeric metric (range [0, 100]): reportValue, clipping counted, the wrong kind
    // either way and NaN refused naming the field.
    for (int i = 0; i < 10; ++i) {
      try (Reporter r = device(target, new File(work, "value-" + i)).build()) {
        if (i == 0) {
          e = expectError(StatusCode.INVALID_ARGUMENT, () -> r.report("jvm_value", true));
          check(e.getMessage().contains("metric") && e.getMessage().contains("ReportValue"), e);
          e = expectError(StatusCode.INVALID_ARGUMENT, () -> r.reportValue("jvm_count", 5.0));
          check(e.getMessage().contains("metric"), e.getMessage());
          e =
              expectError(
                  StatusCode.INVALID_ARGUMENT, () -> r.reportValue("jvm_value", Double.NaN));
          check(e.getMessage().contains("value"), e.getMessage());
        }
        double value = 12.0 * i; // 108 for device 9: above the range, clipped to 100
        ReportResult result = r.reportValue("jvm_value", value, Map.of("screen", "home"));
        check(result.queued() && result.reportId().length == 16, result);
        ReportResult again = r.reportValue("jvm_value", value + 1);
        check(again.outcome() == ReportResult.Outcome.ALREADY_REPORTED, again);
        r.flush(10_000);
        MetricLedger ledger = r.ledger("jvm_value");
        check(ledger.reportsAcknowledged == 1 && ledger.randomizations == 1, ledger);
        check(r.stats().valuesClipped == (i == 9 ? 1 : 0), r.stats());
      }
    }
    check(serverCount("jvm_value") == 10, "server n of jvm_value");

    // 4c. A heavy-hitters metric (max_length 8): reportString with the value's UTF-8 bytes, the
    // same value's memoized report, the wrong kind either way and bad values refused naming the
    // field, never repeating the value.
    try (Reporter r = device(target, new File(work, "string")).build()) {
      e = expectError(StatusCode.FAILED_PRECONDITION, () -> r.reportString("jvm_count", "x"));
      check(e.getMessage().contains("yes_no"), e.getMessage());
      e = expectError(StatusCode.FAILED_PRECONDITION, () -> r.report("jvm_sig", true));
      check(e.getMessage().contains("heavy_hitters"), e.getMessage());
      e = expectError(StatusCode.FAILED_PRECONDITION, () -> r.reportValue("jvm_sig", 1.0));
      check(e.getMessage().contains("reportString"), e.getMessage());
      e = expectError(StatusCode.INVALID_ARGUMENT, () -> r.reportString("jvm_sig", "zq-secret"));
      check(e.getMessage().contains("value") && !e.getMessage().contains("zq-"), e.getMessage());
      e = expectError(StatusCode.INVALID_ARGUMENT, () -> r.reportString("jvm_sig", "zq\u0000x"));
      check(e.getMessage().contains("value") && !e.getMessage().contains("zq"), e.getMessage());
      // "\u00e9t\u00e9" is 3 characters but 5 UTF-8 bytes: within max_length 8.
      ReportResult result = r.reportString("jvm_sig", "\u00e9t\u00e9", Map.of("screen", "home"));
      check(result.queued() && result.reportId().length == 16, result);
      ReportResult again = r.reportString("jvm_sig", "other");
      check(again.outcome() == ReportResult.Outcome.ALREADY_REPORTED, again);
      r.flush(10_000);
      MetricLedger ledger = r.ledger("jvm_sig");
      check(ledger.reportsAcknowledged == 1 && ledger.randomizations == 1, ledger);
      // Six characters, nine UTF-8 bytes: one past max_length, so refused by its byte length.
      e = expectError(
          StatusCode.INVALID_ARGUMENT, () -> r.reportString("jvm_sig", "\u00e9\u00e9\u00e9abc"));
      check(e.getMessage().contains("9"), e.getMessage());
    }

    // 5. Per-report labels: added to the reporter's, a key in both taking the report's value.
    for (int i = 0; i < 6; ++i) {
      try (Reporter r =
          device(target, new File(work, "labels-" + i)).label("screen", "default").build()) {
        Map<String, String> labels = new TreeMap<>();
        labels.put("screen", i % 3 == 0 ? "home" : "settings");
        check(r.report("jvm_labels", true, labels).queued(), "labels " + i);
        r.flush(10_000);
      }
    }
    String groups = serverGroups("jvm_labels", "screen");
    check(groups.equals("home=2 settings=4"), groups);

    // 6. The collector down: the report stays durable on the device (across a restart of the
    // reporter) and is delivered, counted once, when the collector is back.
    File outage = new File(work, "outage");
    try (Reporter r =
        device(target, outage)
            .backgroundSending(false)
            .rpcTimeoutMillis(1_000)
            .shutdownDrainMillis(200)
            .build()) {
      r.prefetch(List.of("jvm_outage"), 5_000);
      control("stop");
      check(r.report("jvm_outage", true).queued(), "queued while the collector is down");
      try {
        r.flush(3_000);
        check(false, "flush succeeded with the collector down");
      } catch (DeniableException down) {
        check(
            down.code() == StatusCode.UNAVAILABLE || down.code() == StatusCode.DEADLINE_EXCEEDED,
            down.getMessage());
      }
      check(r.pending() == 1, r.pending());
      check(r.stats().failedAttempts >= 1, r.stats());
    }
    control("start");
    try (Reporter r = device(target, outage).backgroundSending(false).build()) {
      check(r.pending() == 1, "durable across close: " + r.pending());
      r.flush(20_000);
      DeliveryStats stats = r.stats();
      check(stats.queued == 0 && stats.acknowledged == 1 && stats.droppedRejected == 0, stats);
    }
    check(serverCount("jvm_outage") == 1, "server n of jvm_outage");

    // 7. INVALID_ARGUMENT is permanent: the report is dropped and counted, not retried. The
    // server runs with --max_label_values=3, so a fourth value of "v" is refused.
    try (Reporter r =
        device(target, new File(work, "reject"))
            .backgroundSending(false)
            .oneReportPerPeriod(false) // one reporter standing for four devices
            .build()) {
      for (String v : new String[] {"a", "b", "c"}) {
        check(r.report("jvm_reject", true, Map.of("v", v)).queued(), v);
      }
      r.flush(10_000);
      check(r.report("jvm_reject", true, Map.of("v", "d")).queued(), "d");
      e = expectError(StatusCode.INVALID_ARGUMENT, () -> r.flush(10_000));
      check(e.getMessage().contains("dropped"), e.getMessage());
      DeliveryStats stats = r.stats();
      check(stats.queued == 0 && stats.droppedRejected == 1 && stats.acknowledged == 3, stats);
    }
    check(serverCount("jvm_reject") == 3, "server n of jvm_reject");

    // 8. Many threads on one reporter, then close(): close drains what is queued, and every
    // call after it is FAILED_PRECONDITION.
    Reporter shared =
        device(target, new File(work, "threads"))
            .backgroundSending(false)
            .oneReportPerPeriod(false)
            .build();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; ++t) {
      Thread thread =
          new Thread(
              () -> {
                for (int i = 0; i < 50; ++i) shared.report("jvm_close", i % 2 == 0);
              });
      threads.add(thread);
      thread.start();
    }
    for (Thread thread : threads) thread.join();
    check(shared.pending() == 200, shared.pending());
    shared.close(); // nothing sent yet: close's drain sends the 200
    shared.close(); // idempotent
    e = expectError(StatusCode.FAILED_PRECONDITION, () -> shared.report("jvm_close", true));
    check(e.getMessage().contains("closed"), e.getMessage());
    expectError(StatusCode.FAILED_PRECONDITION, shared::pending);
    check(serverCount("jvm_close") == 200, "server n of jvm_close");

    System.out.println("jvm_sdk: all checks passed");
  }
}
