/// `simulate --script FILE`: replays a script with the real refresh client against a scripted
/// server, in virtual time (<doc:CommandLineTool>).
enum SimulateCommand: Command {
  static let spec = CommandSpec(
    name: "simulate",
    summary: "replay a script: the real refresh client against a scripted server",
    usage: "simulate --script FILE [--json] [--timeline HTML]",
    discussion: """
      Runs the library's EntitlementClient on an SQLite cache against a server that answers
      as the script says, on a virtual clock: a field report ("access vanished after
      switching accounts offline") replayed in milliseconds, the same byte for byte on every
      run. Prints one line per event in the order it happened: every state the client
      publishes (update), every fetch that ends (fetch), every check step (check), and every
      change of a queued purchase (purchase: pending, posting, synced, conflict, rejected or
      expired, or bound to another user, nothing changed); with --json one JSON object a
      line, keys sorted. Users are printed by their script labels; nothing else of an
      identity is. Text output escapes control characters (\\u{1B}); JSON escapes them as
      JSON does.
      """,
    flags: [
      Flag("--script", "FILE", "the script to run (JSON)"),
      Flag("--json", nil, "print one JSON object per event instead of text"),
      Flag(
        "--timeline", "HTML",
        "also draw the run as one self-contained HTML page (SVG, no script) in HTML"),
    ],
    notes: [
      """
      The script: {"start": TIME, "db": null or PATH, "policy": "conservative" or
      "serverSnapshot", "watch": [KEY...], "identity": {"sdkKey", "installation",
      "environment", "user"}, "server": {USER: [ANSWER...]}, "steps": [STEP...]}.
      An ANSWER is {"snapshot": {...}, "latency": D} or {"fail": "transient" or "rejected",
      "status": N, "latency": D}; each fetch for a user takes the next one (none left: a
      transient failure at once). A snapshot without requestDate gets the time the request
      arrived. A STEP is {"at": TIME, "do": ACTION, ...}, times not decreasing.
      """,
      """
      "signed": true makes the server sign its answers and the cache pin the simulation's
      test root (the documented test-vector keys; public, for simulations only). A snapshot
      ANSWER may then say how it is signed, "signature": valid (the default), none,
      wrong_nonce, other_user, expired_key, untrusted_key or forged.
      """,
      """
      Actions: start, foreground, background, logIn (user), logOut (to the user labelled
      anonymous), refresh (policy cacheOnly, cachedOrFetched, notStaleCachedOrFetched or
      fetchCurrent with a timeout; none: refresh()), purchase (transaction, product), restore,
      sync, networkAvailable, relaunch (killed and launched again on the same file), check
      (entitlement: the cache-only decision), setClock (to: sets only the device's wall
      clock).
      """,
      """
      TIME is ISO-8601 or +D from start (setClock also takes -D), steps at most 366 days after
      start. D is 500ms, 2s, 10m, 1h or 30d. "db": null runs on a throw-away database; a path (relative to the current
      directory) is created when missing and kept. The app starts in the foreground, where
      failed fetches are retried (1 s doubling to 5 min): a background step quiets them, and
      there a refresh first waits a random 0-5 s (seeded: the same every run). The run ends
      after the last step once no answer is on its way; later timers do not run.
      Exit status: 0 ran; 2 bad script (the field's path and the problem); 3 storage error:
      a db that cannot be opened (before any step) or that refuses a write (the run stops
      there), whatever the script holds, said once on stderr.
      """,
    ],
    examples: [
      "entitlement-cache simulate --script field-report.json",
      "entitlement-cache simulate --script field-report.json --json",
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> ExitStatus {
    // The engine runs the client's tasks on its own task executor, which is what makes a
    // replay the same every time; macOS has task executors only from version 15.
    guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
      throw CLIError.usage("simulate: needs macOS 15 or later")
    }
    guard let file = invocation.arguments.value("--script"), !file.isEmpty else {
      throw CLIError.usage("simulate: missing --script FILE")
    }
    let data = try InputFile.contents(of: file)
    guard !data.isEmpty else {
      throw CLIError.usage("\(file): empty; expected a simulation script's JSON")
    }
    let script: SimulationScript
    do {
      script = try ScriptParser.parse(data)
    } catch {
      // A path names the field; a problem with the whole file names the file.
      throw CLIError.usage(error.path.isEmpty ? "\(file): \(error.problem)" : error.message)
    }
    let timelineFile = invocation.arguments.value("--timeline")
    if let timelineFile {
      // The database, and the files SQLite keeps beside it.
      let database = script.database.map { db in ["", "-wal", "-shm", "-journal"].map { db + $0 } }
      try TimelineFile.checkWritable(timelineFile, notOver: [file] + (database ?? []))
    }
    let outcome = try SimulationRunner(script: script).run()
    Console.out(
      invocation.wantsJSON
        ? SimulationOutput.jsonLines(outcome.events) : SimulationOutput.text(outcome.events))
    if let timelineFile {
      // A run a storage failure stopped is drawn up to where it stopped, and says so.
      try TimelineFile.write(
        Timeline(script: script, events: outcome.events, stepsRun: outcome.stepsRun),
        events: outcome.events.count, title: "Timeline of \(file)", to: timelineFile,
        stopped: outcome.failure.map { _ in
          "The run stopped here: the database could not be opened or written (exit 3; the error "
            + "is on stderr)."
        })
    }
    if let failure = outcome.failure { throw failure }
    return .success
  }
}
