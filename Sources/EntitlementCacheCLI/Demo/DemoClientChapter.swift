import EntitlementCache
import EntitlementCacheTesting

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The demo's last chapter: the refresh client (`Sources/EntitlementCache/EntitlementCache.docc/Articles/RefreshClient.md`), run by the `simulate` engine
/// on the demo's database. The story is a simulation script, so what it shows is what
/// `entitlement-cache simulate` prints for the same script.
///
/// Alice's grant is in the file from a session the day before. The app launches with no
/// network; she forces a fetch that times out and whose answer lands late; she refreshes and
/// Bob logs in before that answer is back; then Bob's short grant runs out with no network.
struct DemoClientChapter {
  /// The demo's database, which the chapter's installation shares with the earlier steps.
  let path: String
  /// When the chapter's story starts: the demo's start, on a new installation.
  let start: Date

  private static let sdkKey = "demo_sdk_key"
  private static let installation = "demo-install-3"
  private static let minute: TimeInterval = 60
  private static let hour: TimeInterval = 3600
  private static let day: TimeInterval = 86_400

  /// Alice's scope, on the chapter's installation.
  private var alice: CacheScope {
    get throws(CLIError) {
      do {
        return try CacheScope(
          sdkKey: Self.sdkKey, installationID: Self.installation, environment: .production,
          appUserID: "alice")
      } catch {
        throw CLIError.usage("demo: \(error)")
      }
    }
  }

  /// Stores Alice's grant as her session the day before left it, through the demo's cache.
  func seed(_ cache: SQLiteCustomerInfoCache, clock: ManualClock) throws(CLIError) {
    let yesterday = start - Self.day
    let scope = try alice
    clock.set(yesterday)
    do {
      let snapshot = try CustomerInfoSnapshot(
        jsonData: Data(proSnapshot(at: yesterday, until: proExpiry, product: "pro_monthly").utf8)
      )
      try cache.store(snapshot, for: scope)
    } catch let error as SnapshotError {
      throw CLIError.usage(
        "demo snapshot: \(error); its dates follow --now, so give one further from 0000 and 9999")
    } catch let error as CacheError {
      throw CLIError(error, path: path)
    } catch {
      throw CLIError.usage("demo: \(error)")
    }
  }

  /// Runs the chapter's script and returns its steps, each with the events it caused, and the
  /// run's timeline.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  func run() throws(CLIError) -> (steps: [DemoStep], timeline: Timeline, events: Int) {
    let script: SimulationScript
    do {
      script = try ScriptParser.parse(Data(scriptJSON.utf8))
    } catch {
      throw CLIError.usage("demo script: \(error.message)")
    }
    let outcome = try SimulationRunner(script: script).run()
    if let failure = outcome.failure { throw failure }
    var steps: [DemoStep] = []
    for section in sections {
      var step = DemoStep(title: section.title, story: section.story)
      step.observations = outcome.events.filter { section.steps.contains($0.step) }
        .compactMap(observation)
      steps.append(step)
    }
    if let late = steps.firstIndex(where: { $0.title == Self.lateAnswerTitle }) {
      steps[late].observations.append(try storedFact())
    }
    return (steps, Timeline(script: script, events: outcome.events), outcome.events.count)
  }

  // MARK: The story

  private static let lateAnswerTitle = "A late answer after a user switch"

  /// Each section of the chapter and the script steps it covers: an event belongs to the last
  /// step started before it.
  private var sections: [(title: String, story: String, steps: ClosedRange<Int>)] {
    [
      (
        "The refresh client launches offline",
        "From here the real EntitlementClient runs on a virtual clock against a scripted "
          + "server, as entitlement-cache simulate runs it. Alice's grant was stored yesterday; "
          + "the app launches with no network. Her stream gets the cached grant before any "
          + "network call, then the failed fetch marks it offline.",
        0...0
      ),
      (
        "A forced fetch that times out",
        "Alice pulls to refresh (fetchCurrent, timeout 3 s). The server takes 8 s: at 3 s the "
          + "wait ends with the cached state, still offline: the stream, already showing it, "
          + "gets nothing new. The fetch goes on; its answer is stored when it lands "
          + "(lateStored) and the stream shows it.",
        1...1
      ),
      (
        Self.lateAnswerTitle,
        "Alice refreshes again and the server is slow (20 s). Bob logs in before the answer "
          + "is back: his stream starts from his own cache (nothing), then his fetch. Alice's "
          + "answer lands under Alice; Bob's stream never shows it.",
        2...3
      ),
      (
        "Expiry flips the stream, offline",
        "Bob's pro is a one-hour pass. He puts the phone away; there is no network. At the "
          + "pass's expiresAt the stream flips to expired on its own, from a timer on the "
          + "virtual clock, with no fetch.",
        4...5
      ),
      (
        "A purchase made offline is queued, then posted as its buyer",
        "Still offline, Bob buys pro. The purchase is written to the queue before any network "
          + "call; the post fails and backs off, and until it is posted his denial says "
          + "\"purchase pending\" (processing, not \"buy\"). Back in the foreground with a "
          + "network, the queue posts it as Bob; the server's answer to the post grants pro, and the "
          + "foreground refresh after it agrees.",
        6...7
      ),
    ]
  }

  /// When Alice's slow answer, asked for at one minute, comes back.
  private var slowAnswer: Date { start + Self.minute + 20 }

  /// When every pro grant of Alice's ends.
  private var proExpiry: Date { start + 29 * Self.day }

  /// The script: the chapter as `simulate` would read it from a file.
  private var scriptJSON: String {
    let database = String(JSONOutput.string(path).sortedLine().dropLast())
    // The server stamps each snapshot with the time its answer leaves (the request's arrival
    // plus the latency), so the cache records no clock offset.
    let forced = start + 8
    let bobs = start + Self.minute + 7
    let back = start + 70 * Self.minute
    let refreshed = back + 2
    return """
      {
        "start": "\(start.iso8601)", "db": \(database), "policy": "conservative",
        "watch": ["pro"],
        "identity": { "sdkKey": "\(Self.sdkKey)", "installation": "\(Self.installation)",
                      "environment": "production", "user": "alice" },
        "server": {
          "alice": [
            { "fail": "transient" },
            { "snapshot": \(proSnapshot(at: forced, until: proExpiry, product: "pro_monthly")),
              "latency": "8s" },
            { "snapshot": \(proSnapshot(at: slowAnswer, until: proExpiry, product: "pro_monthly")),
              "latency": "20s" }
          ],
          "bob": [
            { "snapshot": \(proSnapshot(at: bobs, until: start + Self.hour, product: "pro_pass")),
              "latency": "2s" },
            { "post": "transient" },
            { "fail": "transient" },
            { "post": "synced",
              "snapshot": \(proSnapshot(at: back, until: proExpiry, product: "pro_monthly")) },
            { "snapshot": \(proSnapshot(at: refreshed, until: proExpiry, product: "pro_monthly")),
              "latency": "2s" }
          ]
        },
        "steps": [
          { "at": "+0s", "do": "start" },
          { "at": "+0s", "do": "refresh", "policy": "fetchCurrent", "timeout": "3s" },
          { "at": "+1m", "do": "refresh" },
          { "at": "+65s", "do": "logIn", "user": "bob" },
          { "at": "+2m", "do": "background" },
          { "at": "+61m", "do": "check", "entitlement": "pro" },
          { "at": "+62m", "do": "purchase", "transaction": "demo-tx-1", "product": "pro_monthly" },
          { "at": "+70m", "do": "foreground" }
        ]
      }
      """
  }

  /// A snapshot taken at `time` granting pro until `expiry`.
  private func proSnapshot(at time: Date, until expiry: Date, product: String) -> String {
    """
    { "requestDate": "\(time.iso8601)", "verification": "verified",
      "entitlements": { "pro": { "status": "active", "expiresAt": "\(expiry.iso8601)",
        "verifiedAt": "\(time.iso8601)", "productId": "\(product)", "source": "purchase" } } }
    """
  }

  // MARK: Showing events

  /// What the chapter shows of `event`; nil for a diagnostic, which the story tells in words.
  private func observation(_ event: SimulationEvent) -> DemoObservation? {
    let at = SimulationTime.date(event.at)
    let user = event.user ?? "the app"
    switch event.kind {
    case .update(let decisions):
      // The chapter watches pro alone.
      guard let decision = decisions["pro"] else {
        return DemoObservation(
          at: at, who: "\(user)'s stream", content: .fact("published, nothing watched"))
      }
      return DemoObservation(at: at, who: "\(user)'s stream", content: .decision(decision))
    case .fetch(let flow, let outcome, _):
      return DemoObservation(
        at: at, who: user,
        content: .fact("\(flow.rawValue) fetch → \(SimulationOutput.outcomeText(outcome))"))
    case .check(let decision):
      return DemoObservation(at: at, who: "\(user), cache only", content: .decision(decision))
    case .purchase(let entry):
      return DemoObservation(
        at: at, who: "\(user)'s queue",
        content: .fact("\(entry.transactionID) \(SimulationOutput.purchaseText(entry))"))
    case .purchaseBoundToAnotherUser(let transaction):
      return DemoObservation(
        at: at, who: "\(user)'s queue",
        content: .fact("\(transaction) is bound to another user: nothing changed"))
    case .diagnostic:
      return nil
    }
  }

  /// Where Alice's late answer went: read back from the file once the run is over.
  private func storedFact() throws(CLIError) -> DemoObservation {
    let scope = try alice
    var configuration = CacheConfiguration()
    configuration.pruneOnOpen = false
    configuration.persistsReadTimeBookkeeping = false
    configuration.createIfMissing = false
    let storedAt: Date?
    do {
      let cache = try SQLiteCustomerInfoCache(
        path: path, configuration: configuration, clock: .fixed(slowAnswer))
      storedAt = try cache.load(scope)?.bookkeeping.storedAt
      try cache.close()
    } catch {
      throw CLIError(error, path: path)
    }
    let fact =
      storedAt.map { "her late answer is in the file, stored at \($0.iso8601)" }
      ?? "the file holds nothing for her"
    return DemoObservation(at: slowAnswer, who: "alice", content: .fact(fact))
  }
}
