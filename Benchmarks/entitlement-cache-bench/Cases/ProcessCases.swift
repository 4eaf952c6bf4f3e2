import EntitlementCache
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Whole-process cases: a fresh `entitlement-cache check` against the sqlite3 shell answering
/// the same point query, each timed from spawn to exit.
struct ProcessCases {
  let runs: Int

  /// The first decision of a fresh process, as an app extension or a support script pays it.
  func coldFirstDecision(_ workload: Workload, cli: String?) throws -> CaseResult {
    let name = "cold_first_decision"
    guard let cli, FileManager.default.isExecutableFile(atPath: cli) else {
      return .skipped(name, workload, reason: "no entitlement-cache binary (pass --cli PATH)")
    }
    // The binary must answer correctly before its speed means anything: granted (exit 0) for a
    // stored scope, not granted (exit 1) for a scope that was never stored (<doc:CommandLineTool>).
    let granted = try Spawn.run(cli, checkArguments(workload, user: Workload.user(0)))
    let unknown = try Spawn.run(cli, checkArguments(workload, user: "never-stored"))
    guard granted.status == 0, unknown.status == 1 else {
      return .skipped(
        name, workload,
        reason:
          "\(cli) does not answer check with its exit codes (exit \(granted.status) for a stored scope, \(unknown.status) for an unknown one)"
      )
    }
    var sequence = ScopeSequence(count: workload.scopeCount)
    let arguments = (0..<runs).map { _ in
      checkArguments(workload, user: Workload.user(sequence.next()))
    }
    return try timeRuns(name, workload, executable: cli, arguments: arguments, expectedStatus: 0)
  }

  /// The sqlite3 shell answering the same point query: the floor for any process that opens the
  /// file and reads one row.
  func sqlite3Shell(_ workload: Workload, shell: String) throws -> CaseResult {
    let name = "baseline_sqlite3_cli"
    guard FileManager.default.isExecutableFile(atPath: shell) else {
      return .skipped(name, workload, reason: "\(shell) not found (apt-get install sqlite3)")
    }
    func arguments(_ scope: CacheScope) -> [String] {
      [
        "-readonly", workload.path,
        """
        SELECT e.status, e.expires_at FROM scope s
        JOIN entitlement e ON e.scope_id = s.id AND e.key = '\(Workload.entitlement)'
        WHERE s.scope_key = x'\(scope.key.hex)'
        """,
      ]
    }
    let check = try Spawn.run(shell, arguments(workload.scopes[0]), captureOutput: true)
    guard check.status == 0, check.output.hasPrefix("active|") else {
      throw BenchError.wrongAnswer("sqlite3 answered \(check.output.debugDescription)")
    }
    var sequence = ScopeSequence(count: workload.scopeCount)
    let runArguments = (0..<runs).map { _ in arguments(workload.scopes[sequence.next()]) }
    return try timeRuns(
      name, workload, executable: shell, arguments: runArguments, expectedStatus: 0)
  }

  private func checkArguments(_ workload: Workload, user: String) -> [String] {
    [
      "check", "--db", workload.path, "--sdk-key", Workload.sdkKey, "--installation",
      Workload.installation, "--environment", "production", "--user", user, "--entitlement",
      Workload.entitlement, "--now", Workload.nowText,
    ]
  }

  private func timeRuns(
    _ name: String, _ workload: Workload, executable: String, arguments: [[String]],
    expectedStatus: Int32
  ) throws -> CaseResult {
    // Two untimed runs page the binary and its libraries in, as on any warm machine.
    for warmup in arguments.prefix(2) { _ = try Spawn.run(executable, warmup) }
    var durations: [Double] = []
    var sink = Sink()
    for runArguments in arguments {
      let start = Stopwatch.nanoseconds()
      let result = try Spawn.run(executable, runArguments)
      durations.append(Double(Stopwatch.nanoseconds() - start))
      sink.consume(granted: result.status == expectedStatus)
    }
    return try CaseResult(
      name, workload, Measurement(perOperation: durations, batchSize: 1), sink)
  }
}

/// posix_spawn and wait: no shell, no Foundation `Process` machinery inside the timed span.
enum Spawn {
  struct Outcome {
    var status: Int32
    var output: String
  }

  static func run(
    _ executable: String, _ arguments: [String], captureOutput: Bool = false
  ) throws -> Outcome {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    var fds: [Int32] = [-1, -1]
    if captureOutput {
      guard pipe(&fds) == 0 else { throw BenchError.usage("pipe failed") }
      posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
      posix_spawn_file_actions_addclose(&actions, fds[0])
    } else {
      posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    }
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let code = posix_spawn(&pid, executable, &actions, nil, argv, environ)
    guard code == 0 else { throw BenchError.usage("cannot run \(executable): errno \(code)") }
    var output = ""
    if captureOutput {
      close(fds[1])
      var bytes: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 4_096)
      while true {
        let count = read(fds[0], &buffer, buffer.count)
        if count <= 0 { break }
        bytes.append(contentsOf: buffer[0..<count])
      }
      close(fds[0])
      output = String(decoding: bytes, as: UTF8.self)
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    // WIFEXITED/WEXITSTATUS are macros Swift cannot import.
    let exited = status & 0x7F == 0
    return Outcome(status: exited ? (status >> 8) & 0xFF : -1, output: output)
  }
}
