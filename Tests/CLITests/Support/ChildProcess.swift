import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

#if canImport(Darwin)
  /// What `posix_spawn_file_actions_init` fills: a pointer on Apple platforms.
  typealias SpawnActions = posix_spawn_file_actions_t?
#else
  /// What `posix_spawn_file_actions_init` fills: a structure on Linux.
  typealias SpawnActions = posix_spawn_file_actions_t
#endif

/// A child process started with `posix_spawn`, as a shell starts a command.
///
/// Foundation's `Process` is not used: on Linux, this toolchain's `Process.run` reads past a
/// buffer while it closes inherited descriptors (swift-corelibs-foundation 5472), which the
/// Address Sanitizer reports and which can, rarely, crash a plain run. Every descriptor this
/// opens is close-on-exec, so a child started by another test at the same moment never holds
/// this one's pipes open.
final class ChildProcess {
  /// Where a child's output goes.
  enum Output {
    /// To a pipe this reads in ``finish(timeout:)``.
    case pipe
    /// To `/dev/null`.
    case discard
    /// To a file, created or truncated.
    case file(String)
  }

  /// How the child ended.
  struct Ending {
    /// The exit status, or the signal's number when `signaled`.
    var status: Int32
    /// Whether a signal ended it.
    var signaled: Bool
    var stdout: Data
    var stderr: Data
  }

  let pid: pid_t
  private var stdinPipe: Int32?
  private var pendingInput: Data
  private var stdoutPipe: Int32?
  private var stderrPipe: Int32?
  private var ending: (status: Int32, signaled: Bool)?

  /// Starts `command[0]` with the rest as its arguments, in `directory`, with exactly
  /// `environment`; `stdin` is written to its input by ``finish(timeout:)`` (an empty input,
  /// closed at once, when nil or empty).
  init(
    _ command: [String], in directory: String, environment: [String: String],
    stdin: Data? = nil, stdout: Output = .pipe, stderr: Output = .pipe
  ) throws {
    Self.ignoreBrokenPipes
    let started = try Self.spawn(
      command, in: directory, environment: environment, stdout: stdout, stderr: stderr)
    pid = started.pid
    stdoutPipe = started.stdout
    stderrPipe = started.stderr
    pendingInput = stdin ?? Data()
    if pendingInput.isEmpty {
      close(started.stdin)
    } else {
      stdinPipe = started.stdin
      _ = fcntl(started.stdin, F_SETFL, fcntl(started.stdin, F_GETFL) | O_NONBLOCK)
    }
  }

  /// A child a test dropped without waiting for it (it threw first) is killed and reaped, so
  /// it neither runs on nor stays a zombie.
  deinit {
    for end in [stdinPipe, stdoutPipe, stderrPipe].compactMap({ $0 }) { close(end) }
    if ending == nil {
      kill(pid, SIGKILL)
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    }
  }

  /// Whether the child has not ended yet.
  var isRunning: Bool {
    guard ending == nil else { return false }
    var status: Int32 = 0
    let reaped = waitpid(pid, &status, WNOHANG)
    guard reaped == pid else { return reaped == 0 }
    ending = Self.decode(status)
    return false
  }

  /// Sends `signal` to the child if it is still running.
  func send(_ signal: Int32) {
    if isRunning { kill(pid, signal) }
  }

  /// Writes the input, reads what the child writes to its pipes until it closes them, and
  /// waits for it to end, killing it after `timeout` seconds so a hung child fails a test
  /// instead of hanging the suite. A descendant that keeps the pipes open after the child was
  /// killed is given two seconds more.
  func finish(timeout: Double = 30) -> Ending {
    var collected: [Int32: Data] = [:]
    var open = [stdoutPipe, stderrPipe].compactMap { $0 }
    var deadline = Date().addingTimeInterval(timeout)
    var killed = false
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while !open.isEmpty || stdinPipe != nil || isRunning {
      let left = deadline.timeIntervalSinceNow
      if left <= 0 {
        guard !killed else { break }
        kill(pid, SIGKILL)
        killed = true
        closeInput()
        deadline = Date().addingTimeInterval(2)
        continue
      }
      var watched = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
      if let input = stdinPipe {
        watched.append(pollfd(fd: input, events: Int16(POLLOUT), revents: 0))
      }
      // With nothing to read or write, the loop only waits for the child to end: a short
      // wait, then ask again.
      let wait = watched.isEmpty ? 10 : min(Int32(left * 1_000) + 1, 1_000)
      let ready = poll(&watched, nfds_t(watched.count), wait)
      if ready < 0, errno != EINTR { break }
      for entry in watched where entry.revents != 0 {
        if entry.fd == stdinPipe {
          writeInput()
          continue
        }
        let count = read(entry.fd, &buffer, buffer.count)
        if count > 0 {
          collected[entry.fd, default: Data()].append(contentsOf: buffer[0..<count])
        } else if count == 0 || errno != EINTR {
          open.removeAll { $0 == entry.fd }
        }
      }
    }
    let ending = waitForEnd()
    return Ending(
      status: ending.status, signaled: ending.signaled,
      stdout: stdoutPipe.flatMap { collected[$0] } ?? Data(),
      stderr: stderrPipe.flatMap { collected[$0] } ?? Data())
  }

  /// Waits for the child to end, as it is; input not yet written is dropped, since a child
  /// waiting for the end of its input would otherwise never end.
  @discardableResult
  func waitForEnd() -> (status: Int32, signaled: Bool) {
    if let ending { return ending }
    closeInput()
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    let decoded = Self.decode(status)
    ending = decoded
    return decoded
  }

  /// Writes as much of the pending input as the pipe takes now; closes it once all is
  /// written, or when the child closed its end.
  private func writeInput() {
    guard let input = stdinPipe else { return }
    let written = pendingInput.withUnsafeBytes { bytes in
      write(input, bytes.baseAddress, bytes.count)
    }
    if written > 0 {
      pendingInput.removeFirst(written)
      if pendingInput.isEmpty { closeInput() }
    } else if written < 0, errno != EINTR, errno != EAGAIN {
      closeInput()
    }
  }

  private func closeInput() {
    if let input = stdinPipe { close(input) }
    stdinPipe = nil
    pendingInput = Data()
  }

  /// Ignores SIGPIPE for the test process, once: a child that exits before reading all of
  /// its input makes the next write fail with EPIPE, which ``writeInput()`` handles, instead of
  /// killing the process that runs the tests.
  private static let ignoreBrokenPipes: Void = {
    _ = signal(SIGPIPE, SIG_IGN)
  }()

  /// Spawns the child under the spawn lock, with its three descriptors and the parent's ends
  /// of the pipes; every descriptor made here is closed again if spawning fails.
  private static func spawn(
    _ command: [String], in directory: String, environment: [String: String],
    stdout: Output, stderr: Output
  ) throws -> (pid: pid_t, stdin: Int32, stdout: Int32?, stderr: Int32?) {
    spawning.lock()
    defer { spawning.unlock() }
    #if canImport(Darwin)
      var actions: SpawnActions = nil
    #else
      var actions = SpawnActions()
    #endif
    guard posix_spawn_file_actions_init(&actions) == 0 else { throw failure("file actions") }
    defer { posix_spawn_file_actions_destroy(&actions) }
    var parentEnds: [Int32] = []
    var childEnds: [Int32] = []
    defer { for end in childEnds { close(end) } }
    var spawned = false
    defer { if !spawned { for end in parentEnds { close(end) } } }
    func pipeFor(_ target: Int32, childReads: Bool) throws -> Int32 {
      var ends: [Int32] = [-1, -1]
      // Under the lock every spawn takes: no child is started between the pipe's creation and
      // its close-on-exec flag.
      guard pipe(&ends) == 0 else { throw failure("pipe") }
      for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
      let (child, parent) = childReads ? (ends[0], ends[1]) : (ends[1], ends[0])
      childEnds.append(child)
      parentEnds.append(parent)
      posix_spawn_file_actions_adddup2(&actions, child, target)
      return parent
    }
    func route(_ output: Output, to target: Int32) throws -> Int32? {
      switch output {
      case .pipe:
        return try pipeFor(target, childReads: false)
      case .discard:
        posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
        return nil
      case .file(let path):
        posix_spawn_file_actions_addopen(
          &actions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        return nil
      }
    }
    let input = try pipeFor(0, childReads: true)
    let output = try route(stdout, to: 1)
    let errors = try route(stderr, to: 2)
    var command = command
    switch addChangeDirectory(&actions, directory) {
    case 0: break
    case ENOSYS:
      // A C library before glibc 2.29 has no such action: a shell changes directory instead.
      command = ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", directory] + command
    case let code: throw failure("chdir action", code: code)
    }
    // Descriptors the test process opened without close-on-exec (a file another test is
    // writing, say) must not reach the child: one held open for writing makes executing that
    // file fail with "text file busy". A C library before glibc 2.34 cannot; this package's
    // own descriptors are close-on-exec either way.
    let closing = addCloseFrom(&actions, 3)
    guard closing == 0 || closing == ENOSYS else {
      throw failure("closefrom action", code: closing)
    }

    let arguments = command.map { strdup($0) } + [nil]
    let variables = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in arguments + variables { free(pointer) } }
    var child = pid_t()
    #if canImport(Darwin)
      var attributes: posix_spawnattr_t?
      posix_spawnattr_init(&attributes)
      defer { posix_spawnattr_destroy(&attributes) }
      posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_CLOEXEC_DEFAULT))
      let result = posix_spawn(&child, command[0], &actions, &attributes, arguments, variables)
    #else
      let result = posix_spawn(&child, command[0], &actions, nil, arguments, variables)
    #endif
    guard result == 0 else { throw failure("posix_spawn \(command[0])", code: result) }
    spawned = true
    return (child, input, output, errors)
  }

  /// An exit status as `waitpid` gives it: the low seven bits are the signal that ended the
  /// child, if one did; otherwise the next eight are its exit status.
  private static func decode(_ status: Int32) -> (status: Int32, signaled: Bool) {
    let signal = status & 0x7f
    return signal == 0 ? ((status >> 8) & 0xff, false) : (signal, true)
  }

  /// Held while a child is created, so that no pipe of one test is open without its
  /// close-on-exec flag while another test's child starts.
  private static let spawning = NSLock()

  /// `posix_spawn_file_actions_addchdir_np`, which glibc (2.29 and later) has but declares
  /// only for `_GNU_SOURCE`, so Swift's Glibc module does not show it; looked up at run time.
  private static func addChangeDirectory(
    _ actions: inout SpawnActions, _ directory: String
  ) -> Int32 {
    #if canImport(Darwin)
      return posix_spawn_file_actions_addchdir_np(&actions, directory)
    #else
      typealias AddChangeDirectory =
        @convention(c) (
          UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>
        ) -> Int32
      guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addchdir_np")
      else { return ENOSYS }
      let add = unsafeBitCast(symbol, to: AddChangeDirectory.self)
      return add(&actions, directory)
    #endif
  }

  /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34 and later, for `_GNU_SOURCE`
  /// only, so looked up at run time); on Apple platforms every descriptor but the three is
  /// closed by the `POSIX_SPAWN_CLOEXEC_DEFAULT` flag instead.
  private static func addCloseFrom(
    _ actions: inout SpawnActions, _ lowest: Int32
  ) -> Int32 {
    #if canImport(Darwin)
      return 0
    #else
      typealias AddCloseFrom =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
      guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np")
      else { return ENOSYS }
      let add = unsafeBitCast(symbol, to: AddCloseFrom.self)
      return add(&actions, lowest)
    #endif
  }

  private static func failure(_ step: String, code: Int32 = errno) -> any Error {
    NSError(
      domain: "ChildProcess", code: Int(code),
      userInfo: [NSLocalizedDescriptionKey: "\(step): \(String(cString: strerror(code)))"])
  }
}
