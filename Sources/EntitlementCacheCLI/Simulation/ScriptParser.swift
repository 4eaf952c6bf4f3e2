import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Reads a `simulate` script (<doc:CommandLineTool>) and checks every field before anything runs: a
/// bad script is one ``ScriptError`` naming the first bad field by its JSON path.
package enum ScriptParser {
  /// The longest latency or timeout a script may give. A real request gives up within a minute
  /// or two; a day is far beyond, and keeps a run that retries while an answer is awaited
  /// from waking millions of times.
  static let longestWait: Duration = .seconds(86_400)

  /// Parses the script's JSON bytes.
  ///
  /// - Throws: ``ScriptError`` for JSON that does not parse (path empty) or the first bad field.
  package static func parse(_ data: Data) throws(ScriptError) -> SimulationScript {
    let value: JSONValue
    do {
      // The library's parser, as for snapshots: one pass in document order, so the same bytes
      // always give the same error. JSONDecoder checks strings and numbers while decoding a
      // dictionary, in hash order, so a script with two bad values named either, run to run.
      value = try JSONParser.parse(data)
    } catch {
      throw ScriptError(path: "", problem: "not valid JSON (\(error))")
    }
    let root = try ScriptNode(value: value, path: "").object()
    try root.rejectingOthers(than: [
      "start", "db", "policy", "watch", "identity", "server", "steps", "signed",
    ])
    let startNode = try root.required("start")
    let start = try iso8601(startNode)
    guard let startMilliseconds = SimulationTime.milliseconds(start) else {
      throw startNode.error("not a time")
    }
    let times = TimeReader(start: startMilliseconds)
    let signed = try root.optional("signed")?.bool() ?? false
    var script = SimulationScript(
      start: start,
      database: try root.optional("db")?.string(),
      policy: try root.optional("policy")?.choice(
        "policy", ["conservative": OfflinePolicy.conservative, "serverSnapshot": .serverSnapshot])
        ?? .conservative,
      watched: try watched(root.optional("watch")),
      identity: try identity(root.required("identity")),
      server: try server(root.optional("server"), signed: signed),
      posts: try posts(root.optional("server")),
      steps: try steps(root.required("steps"), times: times))
    script.signed = signed
    return script
  }

  // MARK: Sections

  /// A transaction or product ID as the purchase queue keeps it: one the queue would refuse
  /// mid-run is refused here, with its path, before anything runs.
  private static func storeIdentifier(_ node: ScriptNode) throws(ScriptError) -> String {
    let value = try node.string()
    if value.utf8.count > ObservedPurchase.identifierLimit {
      throw node.error("over \(ObservedPurchase.identifierLimit) bytes")
    }
    if value.utf8.contains(0) { throw node.error("contains a NUL character") }
    return value
  }

  private static func watched(_ node: ScriptNode?) throws(ScriptError) -> Set<String> {
    guard let node else { return [] }
    var keys: Set<String> = []
    for item in try node.array() { keys.insert(try item.string()) }
    return keys
  }

  private static func identity(_ node: ScriptNode) throws(ScriptError) -> SimulationScript.Identity
  {
    let object = try node.object()
    try object.rejectingOthers(than: ["sdkKey", "installation", "environment", "user"])
    return SimulationScript.Identity(
      sdkKey: try object.required("sdkKey").string(),
      installation: try object.required("installation").string(),
      environment: try object.required("environment").choice(
        "environment",
        ["production": StoreEnvironment.production, "sandbox": .sandbox, "local": .local]),
      user: try object.required("user").string())
  }

  private static func server(
    _ node: ScriptNode?, signed: Bool
  ) throws(ScriptError) -> [String: [ScriptedAnswer]] {
    try answers(node, posts: false) { node throws(ScriptError) in
      try answer(node, signed: signed)
    }
  }

  private static func posts(_ node: ScriptNode?) throws(ScriptError)
    -> [String: [ScriptedPostAnswer]]
  {
    try answers(node, posts: true, postAnswer)
  }

  /// Each user's answers of one kind: fetch answers, or post answers (those with `post`).
  private static func answers<Answer>(
    _ node: ScriptNode?, posts: Bool, _ parse: (ScriptNode) throws(ScriptError) -> Answer
  ) throws(ScriptError) -> [String: [Answer]] {
    guard let node else { return [:] }
    let object = try node.object()
    var answers: [String: [Answer]] = [:]
    // Sorted, so the first bad answer reported is the same on every run.
    for user in object.fields.keys.sorted() {
      guard let list = object.optional(user) else { continue }
      var parsed: [Answer] = []
      for item in try list.array() where try item.object().has("post") == posts {
        parsed.append(try parse(item))
      }
      answers[user] = parsed
    }
    return answers
  }

  /// `{"post": "synced" | "conflict" | "transient" | "rejected", ...}`: `snapshot` (synced,
  /// optional), `resolution` (conflict, required), `status` (rejected, required; transient,
  /// optional), `latency`.
  private static func postAnswer(_ node: ScriptNode) throws(ScriptError) -> ScriptedPostAnswer {
    let object = try node.object()
    enum Kind { case synced, conflict, transient, rejected }
    let kind = try object.required("post").choice(
      "post answer",
      [
        "synced": Kind.synced, "conflict": .conflict, "transient": .transient,
        "rejected": .rejected,
      ])
    let latency = try latency(object)
    switch kind {
    case .synced:
      try object.rejectingOthers(than: ["post", "snapshot", "latency"])
      let snapshot = try object.optional("snapshot")?.object().fields
      return ScriptedPostAnswer(reply: .synced(snapshot), latency: latency)
    case .conflict:
      try object.rejectingOthers(than: ["post", "resolution", "latency"])
      let resolution = try object.required(
        "resolution", "login_required, restore_required or support_required"
      ).choice(
        "resolution",
        [
          "login_required": ClaimHint.loginRequired, "restore_required": .restoreRequired,
          "support_required": .supportRequired,
        ])
      return ScriptedPostAnswer(reply: .conflict(resolution), latency: latency)
    case .transient, .rejected:
      try object.rejectingOthers(than: ["post", "status", "latency"])
      var status: Int?
      if let node = object.optional("status") {
        status = try httpStatus(node, transient: kind == .transient)
      }
      if kind == .transient {
        return ScriptedPostAnswer(reply: .failure(.transient(status: status)), latency: latency)
      }
      guard let status else {
        throw ScriptError(
          path: node.path + ".status",
          problem: "missing (a rejected post has its status, such as 400)")
      }
      return ScriptedPostAnswer(reply: .failure(.rejected(status: status)), latency: latency)
    }
  }

  private static func answer(_ node: ScriptNode, signed: Bool) throws(ScriptError) -> ScriptedAnswer
  {
    let object = try node.object()
    switch (object.has("snapshot"), object.has("fail")) {
    case (true, true):
      throw node.error("has both \"snapshot\" and \"fail\"; give one")
    case (false, false):
      throw node.error("needs \"snapshot\", \"fail\" or \"post\"")
    case (true, false):
      try object.rejectingOthers(than: ["snapshot", "latency", "signature"])
      let snapshot = try object.required("snapshot").object()
      var answer = ScriptedAnswer(reply: .snapshot(snapshot.fields), latency: try latency(object))
      if let mode = object.optional("signature") {
        // Unsigned scripts send no signatures: one asked for would be silently ignored.
        guard signed else {
          throw ScriptError(
            path: mode.path, problem: "needs \"signed\": true at the top of the script")
        }
        answer.signature = try mode.choice(
          "signature",
          [
            "valid": .valid, "none": .none, "wrong_nonce": .wrongNonce, "other_user": .otherUser,
            "expired_key": .expiredKey, "untrusted_key": .untrustedKey, "forged": .forged,
          ])
      }
      return answer
    case (false, true):
      try object.rejectingOthers(than: ["fail", "status", "latency"])
      enum Kind { case transient, rejected }
      let kind = try object.required("fail").choice(
        "failure", ["transient": Kind.transient, "rejected": .rejected])
      var status: Int?
      if let node = object.optional("status") {
        status = try httpStatus(node, transient: kind == .transient)
      }
      let failure: FetchFailure
      switch kind {
      case .transient:
        failure = .transient(status: status)
      case .rejected:
        guard let status else {
          throw ScriptError(
            path: node.path + ".status",
            problem: "missing (a rejected answer has its status, such as 401)")
        }
        failure = .rejected(status: status)
      }
      return ScriptedAnswer(reply: .failure(failure), latency: try latency(object))
    }
  }

  private static func latency(_ answer: ScriptObject) throws(ScriptError) -> Duration {
    guard let node = answer.optional("latency") else { return .zero }
    return try wait(node)
  }

  /// A failure's HTTP status, of its kind: a transient failure is a 5xx, a 408 or a 429 (the
  /// client retries it), a rejection a 4xx (the client does not). A 200 "failure" would be
  /// run as the kind it names, and the report would read as if the server had said it.
  private static func httpStatus(_ node: ScriptNode, transient: Bool) throws(ScriptError) -> Int {
    let value = try node.integer()
    guard (100...599).contains(value) else { throw node.error("not an HTTP status (100 to 599)") }
    let fits =
      transient ? value >= 500 || value == 408 || value == 429 : (400...499).contains(value)
    guard fits else {
      throw node.error(
        transient
          ? "\(value) is not a transient failure's status (a 5xx, 408 or 429)"
          : "\(value) is not a rejection's status (a 4xx)")
    }
    return Int(value)
  }

  /// How far after `start` a step may be. The virtual clock runs every timer on the way, and a
  /// client whose fetches fail in the foreground retries every 5 minutes: a step in year 9999
  /// would take hours and hold every event in memory. A year covers every field report's
  /// window, an annual subscription's included.
  static let longestRun: Duration = .seconds(366 * 86_400)

  /// The most steps a script may have, and the most of them purchases. A run holds every
  /// event until it prints them, and each purchase adds an entry that later flows read, so
  /// work grows faster than the steps: 1,000 purchases run in seconds, 20,000 would run for
  /// tens of minutes. A field report needs a few dozen steps.
  static let mostSteps = 10_000
  static let mostPurchases = 1_000

  private static func steps(_ node: ScriptNode, times: TimeReader) throws(ScriptError)
    -> [ScriptStep]
  {
    let items = try node.array()
    guard items.count <= mostSteps else {
      throw node.error(
        "\(items.count) steps; a script has at most \(mostSteps), and a field report a few dozen")
    }
    var steps: [ScriptStep] = []
    var purchases = 0
    var started = false
    var locked = false
    for (index, item) in items.enumerated() {
      let object = try item.object()
      let atNode = try object.required("at")
      let at = try times.offset(atNode)
      if let previous = steps.last, at < previous.at {
        throw atNode.error("earlier than steps[\(index - 1)]")
      }
      guard at <= longestRun else {
        throw atNode.error(
          "more than 366 days after start; a run goes through every timer of the client in "
            + "between (a retry every 5 minutes while fetches fail), so a script covers at "
            + "most a year")
      }
      let step = ScriptStep(at: at, action: try action(object, times: times))
      if !started {
        switch step.action {
        case .foreground, .background:
          // The client ignores a phase change before it starts; a script that meant a launch
          // in the background would run a foreground one without a word.
          throw item.error(
            "a phase change before the app starts does nothing; a launch in the background is "
              + "{\"do\": \"start\", \"in\": \"background\"}")
        default: break
        }
      }
      switch step.action {
      case .start(_, locked: true) where started:
        // The file is open by then: only a restart (a relaunch) locks it again.
        throw item.error(
          "the app has launched already; a restart before the first unlock is "
            + "{\"do\": \"relaunch\", \"locked\": true}")
      case .start(_, let isLocked), .relaunch(_, let isLocked):
        locked = locked || isLocked
      case .unlock where !locked:
        throw item.error(
          "the device is not locked; a start or relaunch with \"locked\": true locks it")
      case .unlock:
        locked = false
      default:
        break
      }
      started = started || step.isStart
      if case .purchase = step.action {
        purchases += 1
        guard purchases <= mostPurchases else {
          throw item.error("a purchase beyond the \(mostPurchases) a script may make")
        }
      }
      steps.append(step)
    }
    return steps
  }

  private static func action(_ object: ScriptObject, times: TimeReader) throws(ScriptError)
    -> ScriptAction
  {
    let doNode = try object.required("do")
    guard case .string(let name) = doNode.value else { throw doNode.error("not a string") }
    guard let fields = ScriptAction.fields.first(where: { $0.key == name })?.value else {
      let hint = CommandLineParser.nearest(name, in: ScriptAction.fields.map(\.key)).map {
        "; did you mean \"\($0)\"?"
      }
      throw doNode.error("unknown action \"\(name)\"" + (hint ?? ""))
    }
    // A misspelt field is named as such, not reported as the field it meant being missing.
    try object.rejectingOthers(than: ["at", "do"] + fields)
    switch name {
    case "start", "relaunch":
      let phase =
        try object.optional("in")?.choice(
          "phase", ["foreground": AppPhase.foreground, "background": .background]) ?? .foreground
      let locked = try object.optional("locked")?.bool() ?? false
      return name == "start" ? .start(phase, locked: locked) : .relaunch(phase, locked: locked)
    case "foreground": return .foreground
    case "background": return .background
    case "logIn": return .logIn(user: try object.required("user").string())
    case "logOut": return .logOut
    case "refresh": return .refresh(try fetchPolicy(object))
    case "purchase":
      return .purchase(
        transaction: try storeIdentifier(object.required("transaction")),
        product: try storeIdentifier(object.required("product")))
    case "restore": return .restore
    case "sync": return .sync
    case "networkAvailable": return .networkAvailable
    case "unlock": return .unlock
    case "check": return .check(entitlement: try object.required("entitlement").string())
    case "setClock":
      return .setClock(to: try times.instant(object.required("to"), allowingEarlier: true))
    default:
      // Every name in ScriptAction.fields has a case above.
      throw doNode.error("unknown action \"\(name)\"")
    }
  }

  private static func fetchPolicy(_ object: ScriptObject) throws(ScriptError) -> FetchPolicy? {
    enum Name { case cacheOnly, cachedOrFetched, notStaleCachedOrFetched, fetchCurrent }
    let name = try object.optional("policy")?.choice(
      "policy",
      [
        "cacheOnly": Name.cacheOnly, "cachedOrFetched": .cachedOrFetched,
        "notStaleCachedOrFetched": .notStaleCachedOrFetched, "fetchCurrent": .fetchCurrent,
      ])
    guard name == .fetchCurrent else {
      if let timeout = object.optional("timeout") {
        throw timeout.error("only a fetchCurrent refresh takes a timeout")
      }
      switch name {
      case .cacheOnly: return .cacheOnly
      case .cachedOrFetched: return .cachedOrFetched
      case .notStaleCachedOrFetched: return .notStaleCachedOrFetched
      case .fetchCurrent, nil: return nil
      }
    }
    let timeout = try wait(object.required("timeout", "fetchCurrent waits at most a timeout"))
    return .fetchCurrent(timeout: timeout)
  }
}
