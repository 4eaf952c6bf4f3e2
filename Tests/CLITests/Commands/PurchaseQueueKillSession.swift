import EntitlementCache
import Foundation
import TestSupport
import Testing

/// One session: the kept file, what the test knows about every transaction it introduced,
/// and the counts the failure messages report.
struct KillSession {
  static let users = ["alice", "bob"]
  static let products = ["pro_monthly", "pro_yearly"]
  static let identity = (sdkKey: "sdk_secret_key", installation: "install-secret")

  let directory: TemporaryDirectory
  let db: String
  let runs: Int
  let seed: UInt64
  var rng: SplitMix64
  /// New transactions per run: as many as the final-entry cap allows over the session, at
  /// most 4 so a run stays short.
  let newPerRun: Int
  /// Each run's virtual start is this much after the previous one: long enough for the
  /// longest backoff (1 h) to come due, short enough that nothing expires (30 days).
  let virtualStep: TimeInterval
  let virtualStart = Date(timeIntervalSince1970: 1_796_040_000)  // 2026-11-30T12:00:00Z
  let observerKeys: [String: ScopeKey]

  /// Who introduced each transaction: its first observation in script order, and so the
  /// observer it must have for good.
  var introducer: [String: String] = [:]
  var product: [String: String] = [:]
  /// In the order they were introduced, so scripts are the same for a seed.
  var introduced: [String] = []
  /// Each entry as the last reading found it.
  var seen: [String: QueuedPurchaseSummary] = [:]
  /// The user-hash prefix each observer's entries carry.
  var userHashPrefixes: [ScopeKey: String] = [:]

  var problems: [String] = []
  var kills = 0
  var completed = 0
  var entriesChecked = 0
  /// Kills after which an entry was `posting`: the kill landed in a post, or after a relaunch
  /// cut one off and before the entry was posted again (measured: about half of them).
  var killsLeavingPosting = 0
  /// Kills after which only some of the run's first observations were queued: the kill
  /// landed among the enqueues.
  var killsAmongEnqueues = 0
  /// The longest run that ended by itself, in seconds.
  var longestRun = 0.0
  var current = "run 0"
  var evidenceKept = false

  init(directory: TemporaryDirectory, runs: Int, seed: UInt64) throws {
    self.directory = directory
    db = directory.path("queue.sqlite")
    self.runs = runs
    self.seed = seed
    rng = SplitMix64(seed: seed)
    newPerRun = max(1, min(4, (CacheConfiguration().maxFinalPurchases - 10) / runs))
    virtualStep = min(2 * .hour, 25 * .day / Double(runs + 1))
    var keys: [String: ScopeKey] = [:]
    for user in Self.users {
      keys[user] =
        try CacheScope(
          sdkKey: Self.identity.sdkKey, installationID: Self.identity.installation,
          environment: .production, appUserID: user
        ).key
    }
    observerKeys = keys
  }

  var summary: String {
    "seed \(seed) (KILL_SEED=\(seed)), \(current): runs \(runs), killed \(kills), "
      + "completed \(completed), kills leaving an entry posting \(killsLeavingPosting), "
      + "kills among enqueues \(killsAmongEnqueues), transactions \(introduced.count), "
      + "entries checked \(entriesChecked)"
      + String(format: ", longest run %.0f ms", longestRun * 1000)
  }

  struct RunOutcome {
    var killed: Bool
    var seconds: Double
  }

  // MARK: Runs

  /// Runs script `index`, killed with SIGKILL `killAfter` seconds after launch unless it has
  /// ended by then, and checks the file it leaves.
  mutating func run(_ index: Int, killAfter delay: Double?) throws -> RunOutcome {
    let (script, observed, firstObserved) = makeScript(index)
    current =
      "run \(index)" + (delay.map { String(format: " (kill at %.1f ms)", $0 * 1000) } ?? "")
    let (process, seconds) = try launch(script, killAfter: delay)
    let ending = process.waitForEnd()
    let killed = ending.signaled && ending.status == SIGKILL
    if killed {
      kills += 1
    } else {
      completed += 1
      longestRun = max(longestRun, seconds)
      expectCleanExit(process)
    }
    let before = seen
    guard let entries = check() else {
      keepEvidence()
      return RunOutcome(killed: killed, seconds: seconds)
    }
    let queued = Set(entries.map(\.transactionID))
    if killed {
      if entries.contains(where: { $0.state == .posting }) { killsLeavingPosting += 1 }
      let unqueuedBefore = firstObserved.filter { before[$0] == nil }
      let landed = unqueuedBefore.filter { queued.contains($0) }.count
      if landed > 0 && landed < unqueuedBefore.count { killsAmongEnqueues += 1 }
    } else {
      // A run that ended enqueued every purchase it made.
      for transaction in observed where !queued.contains(transaction) {
        fail("\(transaction) was purchased in a run that ended, and is not queued")
      }
    }
    if !problems.isEmpty { keepEvidence() }
    return RunOutcome(killed: killed, seconds: seconds)
  }

  /// One uninterrupted run whose server syncs every post, logging each user in so each one's
  /// entries are posted as them, and late enough that every backoff has come due.
  mutating func finalRun(index: Int) throws {
    current = "final run"
    let unsentBefore = Set(seen.values.filter { $0.state.isUnsent }.map(\.transactionID))
    let answers = (0..<(2 * introduced.count + 20)).map { _ in #"{ "post": "synced" }"# }
      .joined(separator: ", ")
    let server = Self.users.map { #""\#($0)": [ \#(answers) ]"# }.joined(separator: ", ")
    let later = Int(2 * TimeInterval.hour)
    let steps = [
      step(0, "start"), step(60, "sync"), step(120, "logIn", #""user": "bob""#),
      step(180, "sync"), step(later, "sync"),
      step(later + 60, "logIn", #""user": "alice""#),
      step(later + 120, "sync"), step(later + 180, "logIn", #""user": "bob""#),
      step(later + 240, "sync"),
    ]
    let script = makeScript(index: index, user: "alice", server: "{ \(server) }", steps: steps)
    let (process, seconds) = try launch(script, killAfter: nil)
    completed += 1
    longestRun = max(longestRun, seconds)
    expectCleanExit(process)
    guard let entries = check() else {
      keepEvidence()
      return
    }
    for entry in entries where entry.state.isUnsent {
      fail("\(entry.transactionID) is still \(entry.state) after a run that synced everything")
    }
    for entry in entries where unsentBefore.contains(entry.transactionID) {
      if entry.state != .synced {
        fail("\(entry.transactionID) was unsent and is \(entry.state), not synced")
      }
    }
    if !problems.isEmpty { keepEvidence() }
  }

  private mutating func expectCleanExit(_ process: ChildProcess) {
    let errors = (try? String(contentsOfFile: directory.path("stderr"), encoding: .utf8)) ?? ""
    let ending = process.waitForEnd()
    if ending.signaled || ending.status != 0 || !errors.isEmpty {
      fail("simulate ended with status \(ending.status) and stderr \(errors)")
    }
  }

  /// Starts `simulate` on `script`, sends SIGKILL after `delay` if it is still running, and
  /// returns it once it has ended, with its wall-clock time.
  private func launch(
    _ script: String, killAfter delay: Double?
  ) throws -> (ChildProcess, Double) {
    let path = try directory.write("script.json", script)
    let errorPath = directory.path("stderr")
    var environment = ["HOME": directory.path, "LANG": "C.UTF-8", "TMPDIR": directory.path]
    environment["PATH"] = ProcessInfo.processInfo.environment["PATH"]
    let started = ContinuousClock.now
    // Output not to a pipe: nobody reads it before the end, and a full pipe would stall the
    // child.
    let process = try ChildProcess(
      [CLI.binary, "simulate", "--script", path, "--json"], in: directory.path,
      environment: environment, stdout: .discard, stderr: .file(errorPath))
    if let delay {
      usleep(UInt32(delay * 1_000_000))
      process.send(SIGKILL)
      process.waitForEnd()
    } else {
      // A hung child must fail the test, not hang the suite.
      _ = process.finish(timeout: 30)
    }
    let elapsed = ContinuousClock.now - started
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return (process, seconds)
  }

  // MARK: Checks

  /// Reopens the file as the next launch would and checks its queue against everything seen
  /// before; nil when it could not be read at all.
  private mutating func check() -> [QueuedPurchaseSummary]? {
    let read: (integrity: [String], entries: [QueuedPurchaseSummary], unreadable: Int)
    do {
      read = try readQueue()
    } catch {
      fail("the file cannot be reopened: \(error)")
      return nil
    }
    guard read.integrity == ["ok"] else {
      fail("integrity_check says \(read.integrity.joined(separator: "; "))")
      return nil
    }
    if read.unreadable > 0 { fail("\(read.unreadable) queue rows are unreadable") }
    entriesChecked += read.entries.count
    var current: [String: QueuedPurchaseSummary] = [:]
    for entry in read.entries {
      let transaction = entry.transactionID
      guard current.updateValue(entry, forKey: transaction) == nil else {
        fail("\(transaction) is queued twice")
        continue
      }
      guard let user = introducer[transaction] else {
        fail("\(transaction) is queued and was never purchased")
        continue
      }
      if entry.observer != observerKeys[user] {
        let holder = observerKeys.first { $0.value == entry.observer }?.key ?? "an unknown scope"
        fail("\(transaction), first observed by \(user), is bound to \(holder)")
      }
      if entry.productID != product[transaction] {
        fail("\(transaction) has product \(entry.productID), not \(product[transaction] ?? "?")")
      }
      let prefix = userHashPrefixes[entry.observer, default: entry.observerUserHashPrefix]
      if entry.observerUserHashPrefix != prefix {
        fail(
          "\(transaction) has user hash \(entry.observerUserHashPrefix), its observer's others \(prefix)"
        )
      }
      userHashPrefixes[entry.observer] = prefix
      guard let before = seen[transaction] else { continue }
      if entry.attempts < before.attempts {
        fail("\(transaction) went from \(before.attempts) attempts to \(entry.attempts)")
      }
      if !before.state.isUnsent,
        entry.state != before.state || entry.resolution != before.resolution
      {
        fail("\(transaction) was final (\(before.state)) and is now \(entry.state)")
      }
      if entry.firstObservedAt != before.firstObservedAt {
        fail(
          "\(transaction) changed its first observation from \(before.firstObservedAt) to \(entry.firstObservedAt)"
        )
      }
    }
    for transaction in seen.keys.sorted() where current[transaction] == nil {
      fail("\(transaction) (\(seen[transaction]?.state.rawValue ?? "?")) is no longer queued")
    }
    // Lost entries stay in `seen`, so each loss is reported once and later runs compare
    // against the most that was ever there.
    seen.merge(current) { $1 }
    return read.entries
  }

  /// The integrity check of the file as the kill left it, then its queue through a cache
  /// opened as an inspection tool does: no pruning, no writes, no moving a damaged file aside.
  private func readQueue() throws -> ([String], [QueuedPurchaseSummary], Int) {
    let health = try CacheInspector.health(path: db)
    guard health.integrity == ["ok"] else { return (health.integrity, [], 0) }
    var configuration = CacheConfiguration()
    configuration.pruneOnOpen = false
    configuration.persistsReadTimeBookkeeping = false
    configuration.createIfMissing = false
    configuration.damageHandling = .fail
    let cache = try SQLiteCustomerInfoCache(path: db, configuration: configuration)
    let queue = try CacheInspector(cache).purchaseQueue()
    try cache.close()
    return (health.integrity, queue.entries, queue.unreadable)
  }

  private mutating func fail(_ problem: String) {
    problems.append("\(current): \(problem)")
  }

  /// Keeps the failing run's script and file past the temporary directory's removal, so the
  /// run can be replayed with `simulate --script`.
  private mutating func keepEvidence() {
    guard !evidenceKept else { return }
    evidenceKept = true
    let kept = FileManager.default.temporaryDirectory
      .appending(path: "purchase-queue-kill-\(seed)").path
    try? FileManager.default.createDirectory(atPath: kept, withIntermediateDirectories: true)
    for name in ["queue.sqlite", "queue.sqlite-wal", "queue.sqlite-shm", "script.json"] {
      try? FileManager.default.removeItem(atPath: kept + "/" + name)
      try? FileManager.default.copyItem(atPath: directory.path(name), toPath: kept + "/" + name)
    }
    problems.append("evidence kept in \(kept) (its script names the test's own copy of the file)")
  }

  // MARK: Scripts

  /// Script `index`: segments of alternating users, each purchasing the transactions it
  /// introduces, the ones a kill kept from being queued, and transactions already queued
  /// under the other user (or its own), with a relaunch or two, syncs and network returns in
  /// between; the server answers posts synced or transient, some with latency, now and then
  /// a conflict or a rejection.
  ///
  /// Returns the script, every transaction it purchases, and those it observes first.
  private mutating func makeScript(_ index: Int) -> (String, Set<String>, [String]) {
    let firstIndex = Int(rng.next() % 2)
    let first = Self.users[firstIndex]
    let segments = 4
    var steps = [step(0, "start")]
    var time = 0
    var newLeft = newPerRun
    var purchased: Set<String> = []
    var firstObserved: [String] = []
    // Entries the previous reading had, in introduction order: the only ones another user may
    // observe, since one a kill kept out of the queue has no first observer yet.
    let queued = introduced.filter { seen[$0] != nil }
    var queuedThisRun: [String] = []
    var relaunches = 1 + Int(rng.next() % 2)
    for segment in 0..<segments {
      let user = Self.users[(firstIndex + segment) % 2]
      if segment > 0 {
        time += 5 + Int(rng.next() % 20)
        steps.append(step(time, "logIn", #""user": "\#(user)""#))
      }
      var purchases: [String] = []
      // The store hands an unfinished transaction to the app again: those a kill cut off
      // before their enqueue are observed again by the same user, first; a few at a time,
      // oldest first, so a string of early kills cannot grow the next script.
      purchases += introduced.filter {
        seen[$0] == nil && introducer[$0] == user && !purchased.contains($0)
      }.prefix(2)
      let fresh = segment == segments - 1 ? newLeft : Int(rng.next() % UInt64(newLeft + 1))
      newLeft -= fresh
      for _ in 0..<fresh {
        let transaction = "tx-\(index)-\(introduced.count)"
        introducer[transaction] = user
        product[transaction] = Self.products[Int(rng.next() % 2)]
        introduced.append(transaction)
        purchases.append(transaction)
      }
      firstObserved += purchases
      let others = (queued + queuedThisRun).filter { introducer[$0] != user }
      purchases += sample(others, count: 1 + Int(rng.next() % 2))
      purchases += sample(queued.filter { introducer[$0] == user }, count: Int(rng.next() % 2))
      queuedThisRun += purchases.filter { introducer[$0] == user && !queued.contains($0) }
      for transaction in shuffled(purchases) {
        time += 5 + Int(rng.next() % 20)
        steps.append(
          step(
            time, "purchase",
            #""transaction": "\#(transaction)", "product": "\#(product[transaction] ?? "")""#))
        purchased.insert(transaction)
        switch rng.next() % 10 {
        case 0 where relaunches > 0:
          relaunches -= 1
          time += 5
          steps.append(step(time, "relaunch"))
        case 1:
          time += 5
          steps.append(step(time, "sync"))
        case 2:
          time += 5
          steps.append(step(time, "networkAvailable"))
        default:
          break
        }
      }
    }
    if relaunches > 0 {
      time += 5
      steps.append(step(time, "relaunch"))
    }
    let server = Self.users.map { user in
      let answers = (0..<60).map { _ in postAnswer() }.joined(separator: ", ")
      return #""\#(user)": [ \#(answers) ]"#
    }.joined(separator: ",\n    ")
    let script = makeScript(index: index, user: first, server: "{ \(server) }", steps: steps)
    return (script, purchased, firstObserved)
  }

  private func makeScript(index: Int, user: String, server: String, steps: [String]) -> String {
    let start = virtualStart.addingTimeInterval(Double(index) * virtualStep)
    return """
      { "start": "\(start.iso8601)", "db": "\(db)", "policy": "conservative", "watch": ["pro"],
        "identity": { "sdkKey": "\(Self.identity.sdkKey)", "installation": "\(Self.identity.installation)",
                      "environment": "production", "user": "\(user)" },
        "server": \(server),
        "steps": [ \(steps.joined(separator: ",\n  ")) ] }
      """
  }

  private func step(_ seconds: Int, _ action: String, _ fields: String = "") -> String {
    #"{ "at": "+\#(seconds)s", "do": "\#(action)"\#(fields.isEmpty ? "" : ", " + fields) }"#
  }

  /// Synced about half the time and transient most of the rest, so entries both finish and
  /// back off; half carry a latency, so a post is in flight while later steps run.
  private mutating func postAnswer() -> String {
    let latency = [
      "", "", "", #", "latency": "1s""#, #", "latency": "3s""#, #", "latency": "20s""#,
    ][
      Int(rng.next() % 6)]
    let answer =
      switch rng.next() % 20 {
      case 0..<10: #""post": "synced""#
      case 10..<17: #""post": "transient", "status": 503"#
      case 17: #""post": "transient", "status": 500"#
      case 18: #""post": "conflict", "resolution": "login_required""#
      default: #""post": "rejected", "status": 400"#
      }
    return "{ \(answer)\(latency) }"
  }

  private mutating func sample(_ items: [String], count: Int) -> [String] {
    Array(shuffled(items).prefix(count))
  }

  private mutating func shuffled(_ items: [String]) -> [String] {
    var items = items
    for index in items.indices.reversed() where index > 0 {
      items.swapAt(index, Int(rng.next() % UInt64(index + 1)))
    }
    return items
  }
}
