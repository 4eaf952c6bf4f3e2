import EntitlementCache
import Foundation

/// Every case of one run, in order, on workloads built once in a temporary directory.
struct Suite {
  let options: Options

  func run() throws -> [CaseResult] {
    let directory = FileManager.default.temporaryDirectory
      .appending(path: "entitlement-cache-bench-\(ProcessInfo.processInfo.processIdentifier)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.path
    let plan: SamplingPlan = options.quick ? .quick : .full
    let harness = Harness(plan: plan)
    let cache = CacheCases(harness: harness)
    let baselines = Baselines(harness: harness)
    let writeSamples = options.quick ? 400 : 1_000
    var results: [CaseResult] = []

    func step(_ name: String, _ body: () throws -> CaseResult) rethrows {
      guard options.includes(name) else { return }
      let result = try body()
      log("\(result.label): \(Report.duration(result.p50)) p50")
      results.append(result)
    }

    log("building workloads in \(path)")
    let headline = try Workload.create(
      in: path, scopes: Workload.headlineScopes, entitlements: Workload.headlineEntitlements)
    try step("hot_access") { try cache.hotAccess(headline) }
    try step("baseline_locked_dictionary") { try baselines.lockedDictionary(headline) }
    try step("read_through_access") { try cache.readThroughAccess(headline) }
    try step("baseline_raw_c_point_read") { try baselines.rawPointRead(headline) }
    try step("baseline_json_blob_decode") {
      try baselines.jsonBlobDecode(headline, directory: path)
    }

    // Writes go to files of their own so the read workloads stay as built.
    let cacheWrites = try Workload.create(
      in: path + "/cache-writes", scopes: Workload.headlineScopes, entitlements: 10,
      makeDirectory: true)
    try step("snapshot_write") { try cache.snapshotWrite(cacheWrites, samples: writeSamples) }
    let rawWrites = try Workload.create(
      in: path + "/raw-writes", scopes: Workload.headlineScopes, entitlements: 10,
      makeDirectory: true)
    try step("baseline_raw_c_write") { try baselines.rawWrite(rawWrites, samples: writeSamples) }

    let scaled = [
      "hot_access", "read_through_access", "baseline_locked_dictionary",
      "baseline_raw_c_point_read",
    ].contains { options.includes($0) }
    for scopes in [1, 10_000, 100_000] where scaled {
      let workload = try Workload.create(in: path, scopes: scopes, entitlements: 10)
      // Each scale case is judged against its baseline at the same size: from 1 to 100,000
      // scopes a random lookup stops fitting the CPU caches, and that growth is the machine's,
      // paid by any in-memory map or B-tree alike.
      try step("hot_access") { try cache.hotAccess(workload) }
      try step("baseline_locked_dictionary") { try baselines.lockedDictionary(workload) }
      try step("read_through_access") { try cache.readThroughAccess(workload) }
      try step("baseline_raw_c_point_read") { try baselines.rawPointRead(workload) }
      try? FileManager.default.removeItem(atPath: workload.path)
    }
    if options.includes("hot_access") {
      let wide = try Workload.create(in: path, scopes: 1, entitlements: 1_000)
      try step("hot_access") { try cache.hotAccess(wide) }
    }

    let processes = ProcessCases(runs: options.quick ? 60 : 200)
    try step("cold_first_decision") {
      try processes.coldFirstDecision(headline, cli: options.resolvedCLIPath)
    }
    try step("baseline_sqlite3_cli") {
      try processes.sqlite3Shell(headline, shell: options.sqlite3Path)
    }
    return results
  }

  private func log(_ message: String) {
    FileHandle.standardError.write(Data("bench: \(message)\n".utf8))
  }
}

/// The machine line of the report.
enum Machine {
  static var description: String {
    let info = ProcessInfo.processInfo
    var cpu = "unknown CPU"
    if let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
      let line = text.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
      let name = line.split(separator: ":", maxSplits: 1).last
    {
      cpu = name.trimmingCharacters(in: .whitespaces)
    }
    let memory = info.physicalMemory / (1 << 30)
    return
      "\(cpu), \(info.activeProcessorCount) cores, \(memory) GiB, \(info.operatingSystemVersionString)"
  }
}
