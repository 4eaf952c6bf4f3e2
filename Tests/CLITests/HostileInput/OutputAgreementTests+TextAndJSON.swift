import Foundation
import TestSupport
import Testing

// For a raw connection that edits the file as a hand, or a newer build, would.
@testable import EntitlementCache

/// Every command run twice on the same case, as text and with `--json`: both exit the same, write
/// the same stderr, and state the same facts, each compared where the text says it and where the
/// JSON holds it. What only echoes the invocation (the `--db` path in a heading, the scope that
/// `check`'s flags name) is not compared: the caller already has it.
extension OutputAgreementTests {
  /// One case's two outputs.
  struct Modes {
    let text: CLIResult
    let json: CLIResult

    /// The JSON value at `path` (keys and array indexes, dot-separated) as JSON writes a
    /// scalar, a string bare: `null`, `true`, `3`, `stored`; `absent` when there is none.
    func value(_ path: String) -> String {
      var node: Any? = try? JSONSerialization.jsonObject(with: Data(json.stdout.utf8))
      for key in path.split(separator: ".") {
        if let index = Int(key), let array = node as? [Any] {
          node = array.indices.contains(index) ? array[index] : nil
        } else {
          node = (node as? [String: Any])?[String(key)]
        }
      }
      guard let node else { return "absent" }
      if node is NSNull { return "null" }
      if let string = node as? String { return string }
      // A number or a Boolean, as JSON writes it: `[true]` without its brackets.
      guard let data = try? JSONSerialization.data(withJSONObject: [node]) else { return "?" }
      return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }

    /// The text's line that holds `token` as a whole word, split into its words.
    func row(holding token: String) -> [Substring] {
      text.stdout.split(separator: "\n").map { $0.split(separator: " ") }
        .first { $0.contains(Substring(token)) } ?? []
    }
  }

  /// Runs `command` on the workspace's file as text, then with `--json`, and expects the same
  /// exit status and stderr of both.
  func bothModes(
    _ command: String, _ arguments: [String], stdin: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> Modes {
    let modes = Modes(
      text: try workspace.run(command, arguments, stdin: stdin),
      json: try workspace.run(command, arguments + ["--json"], stdin: stdin))
    expectSameEnding(modes, sourceLocation: sourceLocation)
    return modes
  }

  func expectSameEnding(_ modes: Modes, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(
      modes.text.status == modes.json.status,
      "exit \(modes.text.status) as text, \(modes.json.status) with --json",
      sourceLocation: sourceLocation)
    #expect(modes.text.stderr == modes.json.stderr, sourceLocation: sourceLocation)
  }

  /// One fact said by both: the text says `phrase`, and the JSON holds `value` at `path`.
  func expectFact(
    _ modes: Modes, _ phrase: String, _ path: String, _ value: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(
      modes.text.stdout.contains(phrase),
      "the text does not say \"\(phrase)\":\n\(modes.text.stdout)",
      sourceLocation: sourceLocation)
    #expect(
      modes.value(path) == value,
      "JSON \(path) is \(modes.value(path)) where the text says \"\(phrase)\":\n\(modes.json.stdout)",
      sourceLocation: sourceLocation)
  }

  @Test func putSaysTheSameOutcomeReasonAndForceInBothModes() throws {
    let stored = try bothModes(
      "put", Sample.scope() + ["--now", SampleSnapshot.requestDate], stdin: SampleSnapshot.single())
    #expect(stored.text.status == 0)
    expectFact(stored, "Stored a snapshot for production 9ed8a3f3548c…", "outcome", "stored")
    expectFact(stored, "stored at     2026-11-30T12:00:00Z", "storedAt", "2026-11-30T12:00:00Z")
    expectFact(stored, "entitlements  pro\n", "entitlements.0", "pro")

    let older = try bothModes(
      "put", Sample.scope() + ["--now", "2026-11-30T12:05:00Z"],
      stdin: SampleSnapshot.single(requestDate: "2026-11-30T11:00:00Z"))
    #expect(older.text.status == 1)
    expectFact(older, "discarded: older than the stored snapshot", "outcome", "discardedOlder")
    expectFact(older, "nothing changed, and --force stores it anyway", "forceStores", "true")
    #expect(older.value("reason") == "null")

    // An unsigned answer whose own body claims `failed`: no reason of the library's, and
    // --force stores it, since only the conditional store weighs that claim.
    let claimed = try bothModes(
      "put", Sample.scope() + ["--now", "2026-11-30T12:05:00Z"],
      stdin: SampleSnapshot.single(requestDate: "2026-11-30T12:05:00Z", verification: "failed"))
    #expect(claimed.text.status == 1)
    expectFact(
      claimed, "refused: it failed verification and the stored snapshot is verified", "outcome",
      "refusedUnverified")
    expectFact(claimed, "nothing changed, and --force stores it anyway", "forceStores", "true")
    #expect(claimed.value("reason") == "null")

    // Signed by an intermediate whose certificate ended before the answer's requestDate, over
    // a snapshot the trust roots verified: refused with the library's reason, --force or not.
    let directory = workspace.directory.path
    #expect(try CLI.run(["keygen", "--out", "root"], in: directory).status == 0)
    let user = Sample.scope(user: SampleScope.userB)
    try workspace.directory.write("first.json", SampleSnapshot.single())
    try workspace.directory.write(
      "later.json", SampleSnapshot.single(requestDate: "2026-11-30T13:00:00Z"))
    for (file, notAfter) in [("first", "2027-11-30T12:00:00Z"), ("later", "2026-11-30T12:30:00Z")] {
      let sign = try CLI.run(
        ["sign"] + user + [
          "--root-key", "root.key", "--file", "\(file).json", "--out", "\(file).sig",
          "--not-after", notAfter,
        ], in: directory)
      #expect(sign.status == 0, "\(sign.stderr)")
    }
    let trust = ["--trust-root", "root.pub"]
    let verified = try workspace.run(
      "put",
      user + trust + [
        "--file", "first.json", "--signature", "first.sig", "--now", SampleSnapshot.requestDate,
      ]
    )
    #expect(verified.stdout.contains("verification  verified"), "\(verified.stdout)")
    for force in [[], ["--force"]] {
      let refused = try bothModes(
        "put",
        user + trust + force + [
          "--file", "later.json", "--signature", "later.sig", "--now", "2026-11-30T13:00:00Z",
        ])
      #expect(refused.text.status == 1)
      expectFact(
        refused, "refused: it failed verification (intermediate_expired)", "reason",
        "intermediate_expired")
      expectFact(refused, "the stored snapshot is verified", "outcome", "refusedUnverified")
      expectFact(refused, "nothing changed, --force or not", "forceStores", "false")
    }
  }

  /// `doctor` decides whether this build reads a file as the reading commands do: a newer
  /// build's file whose recorded read floor is 0 (a hand edit; no migration writes one) is
  /// refused by both, in both modes, where doctor called it healthy and readable.
  @Test func doctorAndTheReadingCommandsJudgeAFileAlike() throws {
    try workspace.put()
    let supported = SQLiteCustomerInfoCache.supportedSchemaVersion
    let healthy = try bothModes("doctor", [])
    #expect(healthy.text.status == 0)
    expectFact(healthy, "cache.sqlite: healthy\n", "healthy", "true")
    let floor = healthy.value("readableFromSchemaVersion")
    #expect(Int(floor) != nil)
    expectFact(
      healthy, "schema version  \(supported), readable from \(floor) (this build writes",
      "schemaVersion", "\(supported)")
    expectFact(healthy, "  scopes          1\n", "scopeCount", "1")

    let newer = supported + 1
    try SQLiteConnection(path: workspace.db).execute(
      """
      DROP TABLE schema_compatibility;
      CREATE TABLE schema_compatibility (id INTEGER PRIMARY KEY, read_version INTEGER);
      INSERT INTO schema_compatibility VALUES (1, 0);
      PRAGMA user_version = \(newer);
      """)
    let doctor = try bothModes("doctor", [])
    #expect(doctor.text.status == 3)
    expectFact(
      doctor, "cache.sqlite: written by a newer schema than this build knows\n", "healthy",
      "false")
    // A floor below 1 counts as none, as the opener takes it: none is shown.
    expectFact(
      doctor, "schema version  \(newer) (this build writes \(supported))",
      "readableFromSchemaVersion", "null")
    for command in ["check", "show"] {
      let entitlement = command == "check" ? ["--entitlement", "pro"] : []
      let read = try bothModes(
        command, Sample.scope() + entitlement + ["--now", SampleSnapshot.requestDate])
      #expect(read.text.status == doctor.text.status)
      #expect(
        read.text.stderr.hasSuffix(
          ": written by schema version \(newer), newer than this build's \(supported); file "
            + "left untouched\n"), "\(read.text.stderr)")
    }
  }

  @Test func checkSaysTheSameDecisionInBothModes() throws {
    try workspace.put(SampleSnapshot.single(), now: SampleSnapshot.requestDate)
    let now = ["--now", "2026-11-30T12:05:00Z"]
    let granted = try bothModes("check", Sample.scope() + ["--entitlement", "pro"] + now)
    #expect(granted.text.status == 0)
    expectFact(granted, "pro: granted, high trust\n", "state", "granted")
    expectFact(granted, "pro: granted, high trust\n", "isHighTrust", "true")
    expectFact(granted, "  freshness         stale\n", "evidence.freshness", "stale")
    expectFact(granted, "  verification      verified\n", "evidence.verification", "verified")
    expectFact(
      granted, "  stored at         2026-11-30T12:00:00Z", "evidence.storedAt",
      "2026-11-30T12:00:00Z")
    expectFact(
      granted, "  valid until       2026-12-30T12:00:00Z", "evidence.validUntil",
      "2026-12-30T12:00:00Z")
    expectFact(granted, "  source            purchase\n", "evidence.source", "purchase")
    expectFact(granted, "  clock offset      0 s\n", "evidence.clockOffset", "0")

    let denied = try bothModes("check", Sample.scope() + ["--entitlement", "gold"] + now)
    #expect(denied.text.status == 1)
    expectFact(denied, "gold: denied: not_entitled\n", "state", "denied")
    expectFact(denied, "gold: denied: not_entitled\n", "reason", "not_entitled")
    expectFact(denied, "  verified at       —\n", "evidence.verifiedAt", "null")
  }

  @Test func refreshFailedAndShowSayTheSameInBothModes() throws {
    try workspace.put(SampleSnapshot.single(), now: SampleSnapshot.requestDate)
    let failed = try bothModes(
      "refresh-failed", Sample.scope() + ["--now", "2026-11-30T12:06:00Z", "--reason", "http 503"])
    #expect(failed.text.status == 0)
    expectFact(
      failed, "  failed at  2026-11-30T12:06:00Z\n", "refreshFailedAt", "2026-11-30T12:06:00Z")
    expectFact(failed, "  reason     http 503\n", "reason", "http 503")
    expectFact(
      failed, "  meaning    cached access is served offline until the next put\n", "hasSnapshot",
      "true")
    let nothing = try bothModes(
      "refresh-failed", Sample.scope(user: SampleScope.userB) + ["--now", "2026-11-30T12:06:00Z"])
    expectFact(nothing, "  reason     —\n", "reason", "null")
    expectFact(
      nothing, "  meaning    no snapshot is stored, so every decision is offline_unavailable\n",
      "hasSnapshot", "false")

    let show = try bothModes("show", Sample.scope() + ["--now", "2026-11-30T12:07:00Z"])
    #expect(show.text.status == 0)
    expectFact(show, "freshness        offline (", "freshness", "offline")
    expectFact(show, "verification     verified\n", "customerInfo.verification", "verified")
    expectFact(
      show, "stored at        2026-11-30T12:00:00Z", "bookkeeping.storedAt", "2026-11-30T12:00:00Z")
    expectFact(
      show, "last failure     2026-11-30T12:06:00Z (1 m ago): http 503\n",
      "bookkeeping.lastRefreshFailureReason", "http 503")
    expectFact(
      show, "last failure     2026-11-30T12:06:00Z", "bookkeeping.lastRefreshFailedAt",
      "2026-11-30T12:06:00Z")
    expectFact(show, "pro          granted, not high trust", "decisions.pro.state", "granted")
    expectFact(show, "pro          granted, not high trust", "decisions.pro.isHighTrust", "false")
  }

  /// `scopes` lists, and `purge` deletes, the same scopes in both modes: each row holds its
  /// JSON entry's fields, the hash by the prefix the text shows.
  @Test func scopesAndPurgeSayTheSameScopesInBothModes() throws {
    try workspace.put(SampleSnapshot.single(), now: SampleSnapshot.requestDate)
    let sandbox = Sample.scope(user: SampleScope.userB, environment: "sandbox")
    let put = try workspace.run(
      "put", sandbox + ["--now", "2026-11-30T12:30:00Z"], stdin: SampleSnapshot.single())
    #expect(put.status == 0)
    let scopes = try bothModes("scopes", ["--now", "2026-11-30T12:40:00Z"])
    expectFact(scopes, "2 scopes in ", "count", "2")
    for index in 0..<2 {
      let entry = "scopes.\(index)."
      let row = scopes.row(holding: String(scopes.value(entry + "hash").prefix(12)))
      for field in ["environment", "userHash", "freshness", "entitlementCount", "storedAt"] {
        #expect(row.contains(Substring(scopes.value(entry + field))), "\(field) not in \(row)")
      }
    }

    // Each mode deletes from its own copy of the same file.
    var runs: [CLIResult] = []
    for (name, json) in [("text.sqlite", false), ("json.sqlite", true)] {
      let copy = workspace.directory.path(name)
      try FileManager.default.copyItem(atPath: workspace.db, toPath: copy)
      runs.append(
        try CLI.run(
          ["purge", "--db", copy, "--unusable", "--now", "2027-01-15T00:00:00Z"]
            + (json ? ["--json"] : []), in: workspace.directory.path))
    }
    let purge = Modes(text: runs[0], json: runs[1])
    expectSameEnding(purge)
    expectFact(purge, "Deleted 2 scopes from ", "deleted", "2")
    for index in 0..<2 {
      let hash = purge.value("hashes.\(index)")
      #expect(purge.text.stdout.contains("\n  \(hash.prefix(12))\n"), "\(hash) not in the text")
    }
  }

  /// `queue` lists the same entries in both modes: a rejected one and one backing off.
  @Test(.enabled(if: CLI.simulates)) func queueSaysTheSameEntriesInBothModes() throws {
    let script = try workspace.directory.write(
      "fill.json",
      """
      { "start": "2026-11-30T12:00:00Z", "db": "\(workspace.db)", "watch": ["pro"],
        "identity": { "sdkKey": "\(SampleScope.sdkKey)", "installation": "\(SampleScope.installation)",
                      "environment": "production", "user": "\(SampleScope.userA)" },
        "server": { "\(SampleScope.userA)": [
          { "snapshot": { "verification": "verified", "entitlements": {} } },
          { "post": "transient", "status": 503 }, { "post": "rejected", "status": 400 } ] },
        "steps": [ { "at": "+0s", "do": "start" }, { "at": "+0s", "do": "background" },
          { "at": "+1m", "do": "purchase", "transaction": "tx1", "product": "pro_monthly" },
          { "at": "+2m", "do": "purchase", "transaction": "tx2", "product": "pro_yearly" } ] }
      """)
    let fill = try CLI.run(["simulate", "--script", script], in: workspace.directory.path)
    #expect(fill.status == 0, "\(fill.stderr)")
    let queue = try bothModes("queue", ["--now", "2026-11-30T12:10:00Z"])
    #expect(queue.text.status == 0)
    expectFact(queue, "2 purchases in ", "count", "2")
    for index in 0..<2 {
      let entry = "purchases.\(index)."
      let row = queue.row(holding: queue.value(entry + "transactionId"))
      let fields = [
        "productId", "observer.userHash", "observer.environment", "state", "attempts",
        "lastFailure",
      ]
      for field in fields {
        #expect(row.contains(Substring(queue.value(entry + field))), "\(field) not in \(row)")
      }
      let retry = queue.value(entry + "nextAttemptAt")
      #expect(row.contains(Substring(retry == "null" ? "—" : retry)), "retry not in \(row)")
    }
    #expect(Set([queue.value("purchases.0.state"), queue.value("purchases.1.state")]).count == 2)
  }

  /// `simulate` on a database it cannot open, or cannot write, says so once on stderr and exits
  /// 3 in both modes, whatever the script holds; its event lines say the same in both, and
  /// neither names the file.
  @Test(.enabled(if: CLI.simulates)) func simulateSaysAStorageFailureOnceInBothModes() throws {
    let directory = workspace.directory
    let loop = directory.path("loop-a")
    try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: "loop-b")
    try FileManager.default.createSymbolicLink(
      atPath: directory.path("loop-b"), withDestinationPath: "loop-a")
    let answer = #"{ "snapshot": { "verification": "verified", "entitlements": {} } }"#
    let purchase = #"{ "at": "+1m", "do": "purchase", "transaction": "tx1", "product": "p" }"#
    func script(db: String, steps: [String]) throws -> String {
      try directory.write(
        "script.json",
        """
        { "start": "2026-11-30T12:00:00Z", "db": "\(db)", "watch": ["pro"],
          "identity": { "sdkKey": "k", "installation": "i", "environment": "production",
                        "user": "alice" },
          "server": { "alice": [ \(answer) ] }, "steps": [ \(steps.joined(separator: ", ")) ] }
        """)
    }
    func simulate(_ path: String) throws -> Modes {
      let modes = Modes(
        text: try CLI.run(["simulate", "--script", path], in: directory.path),
        json: try CLI.run(["simulate", "--script", path, "--json"], in: directory.path))
      expectSameEnding(modes)
      #expect(modes.text.status == 3)
      #expect(modes.text.stderr.split(separator: "\n").count == 1, "\(modes.text.stderr)")
      #expect(!(modes.text.stdout + modes.json.stdout).contains(directory.path))
      return modes
    }
    let start = #"{ "at": "+0s", "do": "start" }"#
    for steps in [[], [start], [start, purchase]] {
      let unopened = try simulate(try script(db: loop, steps: steps))
      #expect(unopened.text.stdout.isEmpty && unopened.json.stdout.isEmpty)
      #expect(unopened.text.stderr.contains(": cannot be opened now ("), "\(unopened.text.stderr)")
    }

    // A newer build's file this one reads and never writes: the first answer is not stored.
    try workspace.put()
    try SQLiteConnection(path: workspace.db).execute(
      "PRAGMA user_version = \(SQLiteCustomerInfoCache.supportedSchemaVersion + 1)")
    let check = #"{ "at": "+1m", "do": "check", "entitlement": "pro" }"#
    let unwritten = try simulate(try script(db: workspace.db, steps: [start, check]))
    #expect(unwritten.text.stderr.contains(", newer than this build's "))
    #expect(unwritten.text.stdout.contains("  start: storageFailed\n"), "\(unwritten.text.stdout)")
    #expect(unwritten.json.stdout.contains(#""flow":"start","outcome":"storageFailed""#))
    // The run stops where the write failed: no retry after it, and no check a minute on.
    for line in (unwritten.text.stdout + unwritten.json.stdout).split(separator: "\n") {
      #expect(
        line.hasPrefix("2026-11-30T12:00:00Z  ")
          || line.hasPrefix(#"{"at":"2026-11-30T12:00:00Z""#),
        "\(line)")
    }
  }
}
