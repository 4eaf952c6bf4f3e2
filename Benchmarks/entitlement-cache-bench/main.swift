import EntitlementCache
import Foundation

// The benchmark suite of issue 5: the cache's read and write paths against baselines measured
// in the same run, and the target ratios CI gates on. Release builds only:
//
//   swift run -c release entitlement-cache-bench --json results.json
//   scripts/bench.sh    # the --quick run CI uses, with --check-targets

do {
  let options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
  if let profile = options.profile {
    try Profile.run(
      profile.kind, count: profile.count, scopes: options.profileScopes,
      entitlements: options.profileEntitlements)
    exit(0)
  }
  let suite = Suite(options: options)
  let results = try suite.run()
  let checks = TargetCheck.evaluate(results)
  print(Report.table(results))
  print()
  print(TargetCheck.table(checks))
  print(
    "(a ratio of two cases timed in alternation is the median of their per-round ratios; "
      + "others are ratios of p50s)")
  if let jsonPath = options.jsonPath {
    let data = try Report.json(results, targets: checks, machine: Machine.description)
    try data.write(to: URL(filePath: jsonPath))
  }
  let regressions = checks.filter { $0.status == .regression }
  if options.checkTargets, !regressions.isEmpty {
    for check in regressions {
      let bound = "\(check.target.comparison.rawValue) \(check.target.bound)"
      let value = check.value.map { String(format: "%.2f", $0) } ?? "-"
      FileHandle.standardError.write(
        Data(
          "error: \(check.target.name) is \(value), more than \(Target.gateSlack)x worse than its target \(bound)\n"
            .utf8))
    }
    exit(1)
  }
} catch {
  FileHandle.standardError.write(Data("error: \(error)\n".utf8))
  exit(2)
}
