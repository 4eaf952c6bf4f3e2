/// The performance targets of issues 5, 10, 11, 12 and 13, as ratios between cases of one run,
/// so a slower or busier machine moves both sides together.
struct Target: Sendable {
  enum Comparison: String {
    case atMost = "<="
    case atLeast = ">="
  }

  /// How far past its target a ratio may drift before the gate fails: room for the noise of a
  /// shared CI machine while still catching a real regression.
  static let gateSlack = 2.0

  var name: String
  var comparison: Comparison
  var bound: Double
  /// The measured value, from the run's cases; nil when a case it needs was skipped.
  var measure: @Sendable ([CaseResult]) -> Double?

  static let all: [Target] = [
    Target(name: "hot_access / baseline_locked_dictionary", comparison: .atMost, bound: 1.5) {
      ratio($0, "hot_access", "baseline_locked_dictionary")
    },
    Target(name: "hot_access p99 (µs)", comparison: .atMost, bound: 1) {
      find($0, "hot_access")?.p99.map { $0 / 1_000 }
    },
    Target(
      name: "read_through_access / baseline_raw_c_point_read", comparison: .atMost,
      bound: 1.3
    ) { ratio($0, "read_through_access", "baseline_raw_c_point_read") },
    Target(
      name: "baseline_json_blob_decode / hot_access", comparison: .atLeast, bound: 300
    ) { ratio($0, "baseline_json_blob_decode", "hot_access") },
    Target(name: "snapshot_write / baseline_raw_c_write", comparison: .atMost, bound: 1.5) {
      ratio($0, "snapshot_write", "baseline_raw_c_write")
    },
    // An import is a snapshot write after a read of the scope in the same transaction.
    Target(name: "snapshot_import / snapshot_write", comparison: .atMost, bound: 1.5) {
      ratio($0, "snapshot_import", "snapshot_write")
    },
    // What an app pays at every launch once its file moved: one `stat` of the old path.
    Target(name: "relocation_done p50 (µs)", comparison: .atMost, bound: 50) {
      find($0, "relocation_done")?.p50.map { $0 / 1_000 }
    },
    // Issue 41: drawing a year of one device, over 5,000 events, as `simulate --timeline`.
    Target(name: "timeline_render_5000 p50 (ms)", comparison: .atMost, bound: 1_000) {
      find($0, "timeline_render_5000", scopes: 1, entitlements: 1)?.p50.map { $0 / 1_000_000 }
    },
    scale("hot_access", scopes: 10_000, against: "baseline_locked_dictionary"),
    scale("hot_access", scopes: 100_000, against: "baseline_locked_dictionary"),
    scale("read_through_access", scopes: 10_000, against: "baseline_raw_c_point_read"),
    scale("read_through_access", scopes: 100_000, against: "baseline_raw_c_point_read"),
    Target(name: "hot_access[1x1000] / [1x10] p50", comparison: .atMost, bound: 1.3) {
      growth($0, "hot_access", from: (1, 10), to: (1, 1_000))
    },
    Target(
      name: "cold_first_decision / baseline_sqlite3_cli", comparison: .atMost, bound: 1.5
    ) { ratio($0, "cold_first_decision", "baseline_sqlite3_cli") },
    // Issue 10: an in-process cold open, on its one-scope file, and hot reads while the same
    // cache instance stores snapshots on another thread.
    Target(
      name: "cold_open_first_decision / baseline_raw_c_cold_open", comparison: .atMost,
      bound: 1.3
    ) { ratio($0, "cold_open_first_decision", "baseline_raw_c_cold_open", scopes: 1) },
    // Issue 25: the whole CustomerInfo from memory, and an answer from the network to the
    // app's stream.
    // A whole evaluation decides every key of the snapshot, ten here, where `hot_access`
    // decides one: the gate holds each of its decisions to three hot ones. Its ratio to one
    // hot decision is in the table of cases.
    Target(
      name: "evaluated_customer_info / (10 x hot_access)", comparison: .atMost, bound: 3
    ) {
      ratio($0, "evaluated_customer_info", "hot_access").map {
        $0 / Double(Workload.headlineEntitlements)
      }
    },
    Target(
      name: "client_publish_after_write / snapshot_write", comparison: .atMost, bound: 1.5
    ) { ratio($0, "client_publish_after_write", "snapshot_write") },
    Target(name: "hot_access_under_writes / hot_access", comparison: .atMost, bound: 1.5) {
      ratio($0, "hot_access_under_writes", "hot_access")
    },
    Target(name: "hot_access_under_writes p99 (µs)", comparison: .atMost, bound: 2) {
      find($0, "hot_access_under_writes")?.p99.map { $0 / 1_000 }
    },
    // Issue 11: what the refresh client adds to a hot decision, and its start on a one-scope
    // file up to the first published state, against the cache's own cold open.
    Target(name: "client_access / hot_access", comparison: .atMost, bound: 1.2) {
      ratio($0, "client_access", "hot_access")
    },
    Target(
      name: "client_start_first_publish / cold_open_first_decision", comparison: .atMost,
      bound: 1.5
    ) { ratio($0, "client_start_first_publish", "cold_open_first_decision", scopes: 1) },
    // Issue 12: enqueuing a purchase against the same row inserted by hand in one transaction.
    Target(
      name: "purchase_enqueue / baseline_raw_c_enqueue", comparison: .atMost, bound: 1.5
    ) { ratio($0, "purchase_enqueue", "baseline_raw_c_enqueue") },
    // Issue 13: with trust roots, a read from the file and a store each check a signature,
    // so each is held to what its baseline plus one Ed25519 verification cost; the hot read
    // checks nothing and is held to the hot read without them.
    Target(
      name: "verified_read_through / (baseline_ed25519_verify + baseline_raw_c_point_read)",
      comparison: .atMost, bound: 1.3
    ) {
      ratio(
        $0, "verified_read_through", sum: ["baseline_ed25519_verify", "baseline_raw_c_point_read"])
    },
    Target(
      name: "snapshot_write_signed / (baseline_ed25519_verify + baseline_raw_c_write)",
      comparison: .atMost, bound: 1.3
    ) {
      ratio($0, "snapshot_write_signed", sum: ["baseline_ed25519_verify", "baseline_raw_c_write"])
    },
    Target(name: "hot_access_verified / hot_access", comparison: .atMost, bound: 1.2) {
      ratio($0, "hot_access_verified", "hot_access")
    },
  ]

  /// How much a case grows from 1 scope to `scopes`, over how much its baseline grows: issue
  /// 5 asks for at most 1.3x growth, and the baseline is what separates the growth this code
  /// adds from the growth of the machine's caches, which a baseline at 100,000 scopes shows to
  /// be several times on its own.
  private static func scale(_ name: String, scopes: Int, against baseline: String) -> Target {
    Target(
      name: "\(name)[\(scopes)x10] growth / \(baseline) growth",
      comparison: .atMost, bound: 1.3
    ) { results in
      guard let own = growth(results, name, from: (1, 10), to: (scopes, 10)),
        let reference = growth(results, baseline, from: (1, 10), to: (scopes, 10))
      else { return nil }
      return own / reference
    }
  }

  /// The p50 of a case at `to` over the same case at `from`.
  private static func growth(
    _ results: [CaseResult], _ name: String, from: (scopes: Int, entitlements: Int),
    to: (scopes: Int, entitlements: Int)
  ) -> Double? {
    guard
      let large = find(results, name, scopes: to.scopes, entitlements: to.entitlements)?.p50,
      let small = find(results, name, scopes: from.scopes, entitlements: from.entitlements)?.p50
    else { return nil }
    return large / small
  }

  /// The headline case of a name: the one at ``Workload/headline`` size.
  private static func find(
    _ results: [CaseResult], _ name: String, scopes: Int = Workload.headlineScopes,
    entitlements: Int = Workload.headlineEntitlements
  ) -> CaseResult? {
    results.first {
      $0.name == name && $0.scopes == scopes && $0.entitlements == entitlements
        && $0.skipped == nil
    }
  }

  /// One case over another, both at `scopes` scopes of the headline's entitlements. For two
  /// cases timed in alternation, the median of the ratios of their samples taken in the same
  /// round: a round lasts milliseconds, so a change of the machine's speed between rounds (a
  /// busy neighbour, a frequency step) cancels out, where the ratio of two medians taken over
  /// the whole run let it through (one run in six failed the gate with no code change).
  /// Otherwise the ratio of their p50s.
  private static func ratio(
    _ results: [CaseResult], _ numerator: String, _ denominator: String,
    scopes: Int = Workload.headlineScopes
  ) -> Double? {
    guard let top = find(results, numerator, scopes: scopes),
      let bottom = find(results, denominator, scopes: scopes)
    else { return nil }
    if let round = top.alternation, round == bottom.alternation, !top.rounds.isEmpty,
      top.rounds.count == bottom.rounds.count
    {
      return Measurement.quantile(zip(top.rounds, bottom.rounds).map { $0 / $1 }, 0.5)
    }
    guard let p50 = top.p50, let base = bottom.p50 else { return nil }
    return p50 / base
  }

  /// The p50 of one case over the sum of other cases' p50s, all at `scopes` scopes of the
  /// headline's entitlements: for a case that does the work of several baselines in one
  /// operation.
  private static func ratio(
    _ results: [CaseResult], _ numerator: String, sum denominators: [String],
    scopes: Int = Workload.headlineScopes
  ) -> Double? {
    guard let top = find(results, numerator, scopes: scopes)?.p50 else { return nil }
    var bottom = 0.0
    for name in denominators {
      guard let p50 = find(results, name, scopes: scopes)?.p50 else { return nil }
      bottom += p50
    }
    return top / bottom
  }
}

/// One target checked against one run.
struct TargetCheck {
  enum Status: String {
    /// The target holds.
    case met
    /// Missed, but within the gate's slack.
    case missed
    /// More than ``Target/gateSlack`` times worse than the target: the gate fails.
    case regression
    /// A case it needs did not run.
    case skipped
  }

  var target: Target
  var value: Double?

  var status: Status {
    guard let value else { return .skipped }
    switch target.comparison {
    case .atMost:
      if value <= target.bound { return .met }
      return value <= target.bound * Target.gateSlack ? .missed : .regression
    case .atLeast:
      if value >= target.bound { return .met }
      return value >= target.bound / Target.gateSlack ? .missed : .regression
    }
  }

  static func evaluate(_ results: [CaseResult]) -> [TargetCheck] {
    Target.all.map { TargetCheck(target: $0, value: $0.measure(results)) }
  }

  static func table(_ checks: [TargetCheck]) -> String {
    var lines = [
      Report.pad("target", 82) + Report.lpad("value", 10) + Report.lpad("target", 12)
        + Report.lpad("status", 12)
    ]
    for check in checks {
      let value = check.value.map { formatted($0) } ?? "-"
      lines.append(
        Report.pad(check.target.name, 82) + Report.lpad(value, 10)
          + Report.lpad("\(check.target.comparison.rawValue) \(formatted(check.target.bound))", 12)
          + Report.lpad(check.status.rawValue, 12))
    }
    return lines.joined(separator: "\n")
  }

  private static func formatted(_ value: Double) -> String {
    value >= 100 ? String(Int(value.rounded())) : String((value * 100).rounded() / 100)
  }
}
