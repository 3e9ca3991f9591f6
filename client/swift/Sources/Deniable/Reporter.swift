// The Swift API over the C API: the same contract as the C++ Reporter (docs/sdk.md). UNTESTED
// (no Swift toolchain where this repository is built and tested); the module map it imports
// is checked by CTest swift_module_map.
import DeniableC

#if canImport(Darwin)
import Darwin  // strdup, free
#elseif canImport(Glibc)
import Glibc
#endif

/// A failed call: the C API's status code (gRPC numbers) and a message naming the field.
public struct DeniableError: Error, CustomStringConvertible {
  public let code: Int32
  public let message: String
  public var description: String { "\(String(cString: deniable_status_name(code))): \(message)" }
}

/// What report() did: queued (with its 16-byte id), or nothing because this metric's report of
/// the current period was queued already ("already reported this period; nothing sent").
public enum ReportOutcome: Equatable {
  case queued(reportId: [UInt8])
  case alreadyReported
}

/// Keeps C copies of Swift strings alive for one call.
private final class CStrings {
  private var owned: [UnsafeMutablePointer<CChar>] = []
  func copy(_ s: String?) -> UnsafePointer<CChar>? {
    guard let s = s, let p = strdup(s) else { return nil }
    owned.append(p)
    return UnsafePointer(p)
  }
  func labels(_ map: [String: String]) -> [deniable_label] {
    map.sorted { $0.key < $1.key }.map { deniable_label(key: copy($0.key), value: copy($0.value)) }
  }
  deinit { owned.forEach { free($0) } }
}

private func check(_ code: Int32, _ error: inout deniable_error) throws {
  guard code != 0 else { return }
  let message = withUnsafeBytes(of: &error.message) { raw in
    String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
  }
  throw DeniableError(code: code, message: message)
}

/// Reports yes/no, categorical, numeric and string answers with randomized response; reports
/// are durable in `storePath` (Application Support, excluded from backups) before report()
/// returns.
/// Thread safety: the methods may be called from any thread; close() must be the last call.
public final class Reporter {
  private var handle: OpaquePointer?

  /// target: the collector's gRPC "host:port". insecure: plaintext, local development only.
  public init(target: String, storePath: String, insecure: Bool = false, caFile: String? = nil,
              bearerToken: String? = nil, labels: [String: String] = [:]) throws {
    let c = CStrings()
    var o = deniable_reporter_options()
    deniable_reporter_options_init(&o)
    o.target = c.copy(target)
    o.insecure = insecure ? 1 : 0
    o.ca_file = c.copy(caFile)
    o.bearer_token = c.copy(bearerToken)
    o.store_path = c.copy(storePath)
    var e = deniable_error()
    let l = c.labels(labels)
    let code = l.withUnsafeBufferPointer { buffer -> Int32 in
      o.labels = buffer.baseAddress
      o.label_count = buffer.count
      return deniable_reporter_open(&o, &handle, &e)
    }
    try check(code, &e)
  }

  /// Randomizes `answer` (or a category of a metric with categories) and queues the report.
  public func report(_ metric: String, _ answer: Bool = false, category: String? = nil,
                     labels: [String: String] = [:]) throws -> ReportOutcome {
    try queue(labels) { c, l, n, id, size, e in
      deniable_reporter_report_labeled(handle, c.copy(metric), answer ? 1 : 0, c.copy(category),
                                       l, n, id, size, e)
    }
  }

  /// Randomizes the category at `index` (0-based, in the metric's order) of a metric with
  /// categories and queues the report: the same report as report(metric, category: name).
  public func reportCategoryIndex(_ metric: String, _ index: Int32,
                                  labels: [String: String] = [:]) throws -> ReportOutcome {
    try queue(labels) { c, l, n, id, size, e in
      deniable_reporter_report_category_index_labeled(handle, c.copy(metric), index, l, n, id,
                                                      size, e)
    }
  }

  /// Randomizes `value`, the true value of a numeric metric in its unit (clipped to the
  /// metric's range, counted in the delivery stats), and queues the report; the value itself
  /// never leaves the randomizer.
  public func reportValue(_ metric: String, _ value: Double,
                          labels: [String: String] = [:]) throws -> ReportOutcome {
    try queue(labels) { c, l, n, id, size, e in
      deniable_reporter_report_value_labeled(handle, c.copy(metric), value, l, n, id, size, e)
    }
  }

  /// Randomizes `value`, the true string of a heavy-hitters metric, as its UTF-8 bytes (at most
  /// the design's max_length bytes, no NUL), for this device's group (drawn once per design and
  /// kept in the store), and queues the report; the store keeps a SHA-256 of the value, never
  /// the value. Errors: FAILED_PRECONDITION naming the metric's kind when it is not
  /// heavy_hitters, INVALID_ARGUMENT naming "value" (too long, a NUL; never repeating it).
  public func reportString(_ metric: String, _ value: String,
                           labels: [String: String] = [:]) throws -> ReportOutcome {
    var bytes = Array(value.utf8)
    defer { for i in bytes.indices { bytes[i] = 0 } }  // the true value's copy, wiped
    return try bytes.withUnsafeBufferPointer { v in
      try queue(labels) { c, l, n, id, size, e in
        deniable_reporter_report_string_labeled(handle, c.copy(metric), v.baseAddress, v.count, l,
                                                n, id, size, e)
      }
    }
  }

  /// One C report call with the labels, the 16-byte id buffer and the error: queued (with the
  /// id) or already reported (the C API leaves the size at 0).
  private func queue(
    _ labels: [String: String],
    _ call: (CStrings, UnsafePointer<deniable_label>?, Int, UnsafeMutablePointer<UInt8>,
             UnsafeMutablePointer<Int>, UnsafeMutablePointer<deniable_error>) -> Int32
  ) throws -> ReportOutcome {
    let c = CStrings()
    var id = [UInt8](repeating: 0, count: 16)
    var size = 0
    var e = deniable_error()
    let l = c.labels(labels)
    let code = l.withUnsafeBufferPointer { buffer in
      call(c, buffer.baseAddress, buffer.count, &id, &size, &e)
    }
    try check(code, &e)
    return size == 0 ? .alreadyReported : .queued(reportId: id)
  }

  /// Sends what is queued, at most timeoutMs milliseconds (blocks: not on the main thread).
  public func flush(timeoutMs: Int64) throws {
    var e = deniable_error()
    try check(deniable_reporter_flush(handle, timeoutMs, &e), &e)
  }

  /// Reports queued and not yet acknowledged.
  public var pending: Int64 { deniable_reporter_pending(handle) }

  /// Stops the sender and drains for at most the shutdown drain; what is left stays queued.
  public func close() {
    deniable_reporter_close(handle)
    handle = nil
  }

  deinit { deniable_reporter_close(handle) }
}
