import EntitlementCache
import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

/// The tool never hands a server's or a user's bytes to the terminal: every character a
/// terminal acts on is shown escaped (`\u{1B}`) in text and escaped as JSON requires in JSON,
/// and an argument that is not UTF-8 is refused, never repaired into another user's scope.
@Suite struct TerminalSafetyTests {
  let workspace: Workspace

  init() throws {
    workspace = try Workspace()
  }

  /// Every character the tool escapes: the C0 controls, DEL, the C1 controls, the line and
  /// paragraph separators, the bidirectional formatting characters, and the invisible ones
  /// (two beyond U+FFFF, which JSON writes as a surrogate pair).
  static let unsafeScalars: [Unicode.Scalar] =
    (Array(0x00...0x1F) + Array(0x7F...0x9F)
    + [0x061C, 0x200E, 0x200F, 0x2028, 0x2029] + Array(0x202A...0x202E) + Array(0x2066...0x2069)
    + [0x00AD, 0x034F, 0x180E, 0x200B, 0x2060, 0xFEFF, 0x1D173, 0xE0001])
    .compactMap(Unicode.Scalar.init)

  /// `<` + every unsafe character + `>`: a string a hostile server could send.
  static let hostile = "<" + String(String.UnicodeScalarView(unsafeScalars)) + ">"
  /// The same without NUL, which a process argument and a transaction ID cannot hold.
  static let hostileArgument = hostile.replacingOccurrences(of: "\u{0}", with: "")

  /// `text` as a JSON string literal, every non-ASCII or control character as `\uXXXX`.
  static func jsonString(_ text: String) -> String {
    var output = "\""
    for scalar in text.unicodeScalars {
      if scalar.value < 0x20 || scalar.value >= 0x7F || scalar == "\"" || scalar == "\\" {
        for unit in String(scalar).utf16 { output += String(format: "\\u%04X", unit) }
      } else {
        output.unicodeScalars.append(scalar)
      }
    }
    return output + "\""
  }

  /// A snapshot whose every free-text field the tool prints holds ``hostile``: the
  /// entitlement key, the unknown status and source, the product, the purchases and the
  /// device list of a device block, so `check pro` prints the devices too.
  static var hostileSnapshot: String {
    let evil = jsonString(hostile)
    return """
      {
        "requestDate": "\(SampleSnapshot.requestDate)",
        "verification": "verified",
        "entitlements": {
          "pro": { "status": "active", "expiresAt": "2026-12-30T12:00:00Z",
                   "verifiedAt": "\(SampleSnapshot.requestDate)", "productId": \(evil),
                   "source": "purchase" },
          \(evil): { "status": \(evil), "expiresAt": null,
                     "verifiedAt": "\(SampleSnapshot.requestDate)", "productId": \(evil),
                     "source": \(evil) }
        },
        "purchases": [ { "id": \(evil), "productId": \(evil), "store": \(evil),
                         "purchasedAt": "\(SampleSnapshot.requestDate)" } ],
        "unclaimedPurchases": [ { "purchaseId": \(evil), "productId": \(evil),
                                  "entitlements": [\(evil)], "claimHint": "restore_required" } ],
        "deviceAccess": {
          "status": "blocked", "reason": "DEVICE_REPLACED",
          "expiresAt": "2026-12-07T12:00:00Z",
          "devices": [ { "id": \(evil), "label": \(evil), "lastSeenAt": "\(SampleSnapshot.requestDate)" } ]
        }
      }
      """
  }

  /// What no output may contain: an unsafe character other than the newline.
  private func expectNothingUnsafe(
    _ output: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let found = output.unicodeScalars.filter { $0 != "\n" && Self.unsafeScalars.contains($0) }
    #expect(
      found.isEmpty, "\(what) printed \(found.map { String($0.value, radix: 16) })",
      sourceLocation: sourceLocation)
  }

  /// A stored reason, a queued purchase and a snapshot, each holding every unsafe character,
  /// written through the library as an SDK would (the tool itself refuses such a reason).
  private func storeHostileState() throws {
    try workspace.put(Self.hostileSnapshot)
    let clock = ManualClock(
      try #require(ISO8601DateFormatter().date(from: SampleSnapshot.requestDate)))
    let cache = try SQLiteCustomerInfoCache(path: workspace.db, clock: clock.cacheClock)
    let scope = try CacheScope(
      sdkKey: SampleScope.sdkKey, installationID: SampleScope.installation,
      environment: .production,
      appUserID: SampleScope.userB)
    try cache.store(try CustomerInfoSnapshot(jsonData: Data(SampleSnapshot.json.utf8)), for: scope)
    try cache.recordRefreshFailure(for: scope, reason: Self.hostile)
    let outcome = try cache.enqueue(
      ObservedPurchase(
        transactionID: Self.hostileArgument, productID: Self.hostileArgument,
        token: PurchaseToken(Data([1]))),
      observedBy: scope)
    #expect(outcome.entry != nil)
    try cache.close()
  }

  @Test func everyCommandThatPrintsAStoredStringEscapesEveryControlCharacter() throws {
    try storeHostileState()
    let now = ["--now", "2026-11-30T12:10:00Z"]
    let userB = Sample.scope(user: SampleScope.userB)
    let runs: [(String, [String])] = [
      ("put", Sample.scope(user: "user-c") + now),
      ("check", Sample.scope() + now + ["--entitlement", "pro"]),
      ("check", Sample.scope() + now + ["--entitlement", Self.hostileArgument]),
      ("show", Sample.scope() + now),
      ("show", userB + now),
      ("scopes", now),
      ("queue", now),
    ]
    var escapedTexts = 0
    for (command, arguments) in runs {
      let stdin = command == "put" ? Self.hostileSnapshot : nil
      for json in [false, true] {
        let result = try workspace.run(
          command, arguments + (json ? ["--json"] : []), stdin: stdin)
        let what = "\(command)\(json ? " --json" : "") \(arguments.prefix(1))"
        #expect([0, 1].contains(result.status), "\(what): \(result.stderr)")
        expectNothingUnsafe(result.stdout, what)
        expectNothingUnsafe(result.stderr, what)
        if json {
          // JSON escapes them and reads back the very same string.
          #expect(
            (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) != nil, "\(what)")
        } else if result.stdout.contains("\\u{1B}") {
          #expect(result.stdout.contains("\\u{202E}") && result.stdout.contains("\\u{9B}"))
          // The newline inside a value is escaped where the value is printed: the last guard
          // over the whole output keeps newlines, so this proves the value's own escaping.
          #expect(result.stdout.contains("\\u{A}"), "\(what) kept a value's newline")
          escapedTexts += 1
        }
      }
    }
    // put (the keys), both checks, both shows and queue print the hostile strings.
    #expect(escapedTexts == 6)

    let show = try workspace.run("show", Sample.scope() + now + ["--json"])
    let info = try #require(try show.json()["customerInfo"] as? [String: Any])
    let entitlements = try #require(info["entitlements"] as? [String: Any])
    let hostile = try #require(entitlements[Self.hostile] as? [String: Any])
    #expect(hostile["productId"] as? String == Self.hostile)
    #expect(hostile["status"] as? String == Self.hostile)
    let failure = try workspace.run("show", userB + now + ["--json"]).json()
    let bookkeeping = try #require(failure["bookkeeping"] as? [String: Any])
    #expect(bookkeeping["lastRefreshFailureReason"] as? String == Self.hostile)
  }

  @Test(.enabled(if: CLI.simulates)) func simulateEscapesTheScriptsLabels() throws {
    let label = Self.jsonString(Self.hostileArgument)
    let script = try workspace.directory.write(
      "script.json",
      """
      { "start": "2026-11-30T12:00:00Z", "watch": ["pro"],
        "identity": { "sdkKey": "k", "installation": "i", "environment": "production",
                      "user": \(label) },
        "server": { \(label): [ { "fail": "transient" } ] },
        "steps": [ { "at": "+0s", "do": "start" },
                   { "at": "+1m", "do": "purchase", "transaction": \(label), "product": "p" },
                   { "at": "+2m", "do": "check", "entitlement": \(label) } ] }
      """)
    for json in [false, true] {
      let result = try CLI.run(
        ["simulate", "--script", script] + (json ? ["--json"] : []), in: workspace.directory.path)
      #expect(result.status == 0, "\(result.stderr)")
      expectNothingUnsafe(result.stdout, "simulate")
      #expect(json || result.stdout.contains("<\\u{1}\\u{2}"))
    }
  }

  /// A stored `\u{1B}`, six printable characters, must not read like an escaped ESC.
  @Test func aBackslashInAValueIsEscapedToo() throws {
    // The JSON key `pro\\u{1B}` is the text `pro\u{1B}`: a backslash, not an ESC.
    try workspace.put(SampleSnapshot.single(#"pro\\u{1B}"#))
    let show = try workspace.run("show", Sample.scope() + ["--now", "2026-11-30T12:10:00Z"])
    #expect(show.stdout.contains("\n" + #"pro\\u{1B}  "#), "\(show.stdout)")
    #expect(!show.stdout.contains("\n" + #"pro\u{1B}  "#))
  }

  @Test func anErrorQuotesAtMostAnExcerptOfALongValue() throws {
    let long = String(repeating: "9", count: 100_000)
    let result = try workspace.run(
      "check", Sample.scope() + ["--entitlement", "pro", "--now", long])
    #expect(result.status == 2)
    #expect(
      result.stderr == "error: --now: '\(String(repeating: "9", count: 80))…' is not an ISO-8601 "
        + "time with a UTC offset, such as 2026-11-30T12:00:00Z\n")
  }

  @Test func anEnvironmentPathThatIsNotUTF8IsRefusedAndNamed() throws {
    for variable in ["ENTITLEMENT_CACHE_DB", "XDG_DATA_HOME", "HOME", "TMPDIR"] {
      let command =
        variable == "TMPDIR"
        ? "demo"
        : "check --sdk-key k --installation i --environment production --user u --entitlement pro"
      let result = try CLI.run(
        ["-c", "\(variable)=$'/tmp/x\\xff' exec \"$0\" \(command)", CLI.binary],
        in: workspace.directory.path, environment: ["XDG_DATA_HOME": "", "HOME": "/nonexistent"],
        prefix: ["/bin/bash"], binaryless: true)
      #expect(result.status == 2, "\(variable): \(result.stderr)")
      #expect(
        result.stderr == "error: $\(variable): not valid UTF-8; paths are text, and invalid "
          + "bytes are refused, never repaired\n")
    }
  }

  @Test func aReasonIsOneShortLineOfText() throws {
    let scope = Sample.scope()
    for (reason, expected) in [
      ("a\nb", "error: --reason: holds a control, bidirectional or invisible character (U+000A)"),
      (
        "\u{1B}]0;pwned\u{7}",
        "error: --reason: holds a control, bidirectional or invisible character (U+001B)"
      ),
      (
        "abc\u{202E}",
        "error: --reason: holds a control, bidirectional or invisible character (U+202E)"
      ),
      (String(repeating: "x", count: 257), "error: --reason: 257 bytes; at most 256 are stored"),
      (String(repeating: "é", count: 129), "error: --reason: 258 bytes; at most 256 are stored"),
      ("", "error: --reason: empty; leave the flag out to record no reason"),
    ] {
      let result = try workspace.run("refresh-failed", scope + ["--reason", reason])
      #expect(result.status == 2)
      #expect(result.stderr.hasPrefix(expected), "\(result.stderr)")
    }
    #expect(!FileManager.default.fileExists(atPath: workspace.db))
    let longest = String(repeating: "é", count: 128)
    #expect(try workspace.run("refresh-failed", scope + ["--reason", longest]).status == 0)
  }

  /// Runs the tool through bash, whose `$'\xff'` passes bytes no Swift `String` can hold.
  private func runWithRawBytes(_ arguments: String) throws -> CLIResult {
    try CLI.run(
      ["-c", "exec \"$0\" \(arguments)", CLI.binary], in: workspace.directory.path,
      prefix: ["/bin/bash"], binaryless: true)
  }

  @Test func anArgumentThatIsNotUTF8IsRefusedAndNamed() throws {
    let scope = "--sdk-key k --installation i --environment production"
    try workspace.put(SampleSnapshot.single(), user: "\u{FFFD}\u{FFFD}")
    let cases = [
      ("check --db cache.sqlite \(scope) --user $'\\xfe\\xfd' --entitlement pro", "--user"),
      ("put --db cache.sqlite \(scope) --user=$'\\xff\\xfe'", "--user"),
      (
        "check --db cache.sqlite --sdk-key $'k\\xc3' --installation i --environment production --user u --entitlement pro",
        "--sdk-key"
      ),
      (
        "check --db cache.sqlite --sdk-key k --installation $'\\x80' --environment production --user u --entitlement pro",
        "--installation"
      ),
      ("check --db cache.sqlite \(scope) --user u --entitlement $'pro\\xff'", "--entitlement"),
      ("doctor --db $'bad\\xff.sqlite'", "--db"),
      ("check --db cache.sqlite \(scope) --user u --json $'\\xff'", "argument 13"),
    ]
    for (arguments, flag) in cases {
      let result = try runWithRawBytes(arguments)
      #expect(result.status == 2, "\(arguments)")
      #expect(result.stdout.isEmpty)
      #expect(
        result.stderr == "error: \(flag): not valid UTF-8; arguments are text, and invalid "
          + "bytes are refused, never repaired\n", "\(arguments)")
    }
    // The scope the lossy decoding used to read, two U+FFFD, is still the only one.
    let scopes = try workspace.run("scopes", ["--json"]).json()
    #expect(scopes["count"] as? Int == 1)
  }
}
