import Foundation

/// Something a case found wrong; the run stops rather than report a figure for a wrong answer.
enum BenchError: Error, CustomStringConvertible {
  case wrongAnswer(String)
  case usage(String)

  var description: String {
    switch self {
    case .wrongAnswer(let detail): "wrong answer: \(detail)"
    case .usage(let detail): "usage: \(detail)"
    }
  }
}

/// One row of the report.
struct CaseResult {
  var name: String
  var scopes: Int
  var entitlements: Int
  var p50: Double?
  var p99: Double?
  var samples: Int
  var batchSize: Int
  /// Why the case did not run, when it did not.
  var skipped: String?
  /// Nanoseconds per operation of each sample, in the order they were taken, when the case was
  /// timed in alternation with others (``Harness/run(together:)``); empty otherwise.
  var rounds: [Double] = []
  /// Which alternation the case was timed in: cases with the same number took sample `i` in
  /// the same round, one right after the other.
  var alternation: Int?

  /// A measured case, after checking that every operation answered `granted`.
  init(_ name: String, _ workload: Workload, _ measurement: Measurement, _ sink: Sink) throws {
    guard sink.operations > 0, sink.granted == sink.operations else {
      throw BenchError.wrongAnswer(
        "\(name): \(sink.granted) of \(sink.operations) operations granted")
    }
    self.init(
      name: name, scopes: workload.scopeCount, entitlements: workload.entitlementCount,
      p50: measurement.median, p99: measurement.p99, samples: measurement.perOperation.count,
      batchSize: measurement.batchSize)
  }

  init(
    name: String, scopes: Int, entitlements: Int, p50: Double?, p99: Double?, samples: Int,
    batchSize: Int, skipped: String? = nil
  ) {
    self.name = name
    self.scopes = scopes
    self.entitlements = entitlements
    self.p50 = p50
    self.p99 = p99
    self.samples = samples
    self.batchSize = batchSize
    self.skipped = skipped
  }

  static func skipped(_ name: String, _ workload: Workload, reason: String) -> CaseResult {
    CaseResult(
      name: name, scopes: workload.scopeCount, entitlements: workload.entitlementCount, p50: nil,
      p99: nil, samples: 0, batchSize: 0, skipped: reason)
  }

  /// `hot_access[100x10]`: the name plus the workload, unique within a run.
  var label: String { "\(name)[\(scopes)x\(entitlements)]" }
}

/// The stdout table and the JSON file.
enum Report {
  static func table(_ results: [CaseResult]) -> String {
    var lines = [
      pad("case", 30) + lpad("scopes", 8) + lpad("ents", 6) + lpad("p50", 12) + lpad("p99", 12)
        + lpad("samples", 9) + lpad("batch", 7)
    ]
    for result in results {
      let head =
        pad(result.name, 30) + lpad("\(result.scopes)", 8) + lpad("\(result.entitlements)", 6)
      if let skipped = result.skipped {
        lines.append(head + "  skipped: \(skipped)")
        continue
      }
      lines.append(
        head + lpad(duration(result.p50), 12) + lpad(duration(result.p99), 12)
          + lpad("\(result.samples)", 9) + lpad("\(result.batchSize)", 7))
    }
    return lines.joined(separator: "\n")
  }

  /// `{"cases": [{"name", "scopes", "entitlements", "p50_ns", "p99_ns", ...}], ...}`.
  static func json(_ results: [CaseResult], targets: [TargetCheck], machine: String) throws -> Data
  {
    var cases: [[String: Any]] = []
    for result in results {
      var entry: [String: Any] = [
        "name": result.name, "scopes": result.scopes, "entitlements": result.entitlements,
        "p50_ns": result.p50.map(rounded) ?? NSNull(),
        "p99_ns": result.p99.map(rounded) ?? NSNull(),
        "samples": result.samples, "batch": result.batchSize,
      ]
      if let skipped = result.skipped { entry["skipped"] = skipped }
      cases.append(entry)
    }
    let checks: [[String: Any]] = targets.map { check in
      [
        "name": check.target.name, "ratio": check.value.map(rounded) ?? NSNull(),
        "target": check.target.bound, "comparison": check.target.comparison.rawValue,
        "status": check.status.rawValue,
      ]
    }
    let root: [String: Any] = ["cases": cases, "targets": checks, "machine": machine]
    return try JSONSerialization.data(
      withJSONObject: root, options: [.prettyPrinted, .sortedKeys])
  }

  static func duration(_ nanoseconds: Double?) -> String {
    guard let nanoseconds else { return "-" }
    switch nanoseconds {
    case ..<1_000: return String(format: "%.1f ns", nanoseconds)
    case ..<1_000_000: return String(format: "%.2f µs", nanoseconds / 1_000)
    default: return String(format: "%.2f ms", nanoseconds / 1_000_000)
    }
  }

  private static func rounded(_ value: Double) -> Double {
    (value * 100).rounded() / 100
  }

  static func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
  }

  static func lpad(_ text: String, _ width: Int) -> String {
    text.count >= width ? " " + text : String(repeating: " ", count: width - text.count) + text
  }
}
