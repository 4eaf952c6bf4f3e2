import Foundation
import Testing

/// What one run of the built binary printed and returned.
struct CLIResult: Sendable {
  let status: Int32
  let stdout: String
  let stderr: String
  /// Wall-clock time of the whole process.
  let seconds: Double

  /// stdout parsed as a JSON object.
  func json() throws -> [String: Any] {
    let value = try JSONSerialization.jsonObject(with: Data(stdout.utf8), options: [])
    return try #require(value as? [String: Any], "stdout is not a JSON object: \(stdout)")
  }
}

/// Runs `entitlement-cache` as a child process, as a user would in a terminal.
enum CLI {
  /// Whether the tool simulates on this system (`simulate`, and the demo's last chapter): its
  /// engine needs task executors, which macOS has from version 15. The tests that run it are
  /// enabled only then.
  static var simulates: Bool {
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) { return true }
    return false
  }

  /// The binary `swift test` built beside the test bundle (`ENTITLEMENT_CACHE_BIN` overrides).
  static let binary: String = {
    let environment = ProcessInfo.processInfo.environment
    if let override = environment["ENTITLEMENT_CACHE_BIN"] { return override }
    let name = "entitlement-cache"
    var directories: [URL] = []
    // Linux: the test executable sits in .build/<config>/ beside the tool.
    directories.append(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath())
    directories.append(URL(fileURLWithPath: CommandLine.arguments.first ?? "."))
    // macOS: the test bundle is .build/<config>/X.xctest/Contents/MacOS/X.
    directories.append(Bundle.main.bundleURL)
    var candidates: [String] = []
    for start in directories {
      var directory = start.deletingLastPathComponent()
      for _ in 0..<4 {
        candidates.append(directory.appending(path: name).path)
        directory = directory.deletingLastPathComponent()
      }
    }
    // Tests/CLITests/Support/CLIRunner.swift: four levels below the package root.
    let packageRoot = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    candidates.append(packageRoot.appending(path: ".build/debug/\(name)").path)
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
      ?? packageRoot.appending(path: ".build/debug/\(name)").path
  }()

  /// Runs the tool with `arguments` in `directory`, with `stdin` as its input (empty when
  /// nil, never a terminal) and a hermetic environment: HOME is `directory`, no
  /// ENTITLEMENT_CACHE_DB or XDG_DATA_HOME unless `environment` sets them.
  static func run(
    _ arguments: [String], in directory: String, stdin: String? = nil,
    environment: [String: String] = [:], prefix: [String] = [], binaryless: Bool = false
  ) throws -> CLIResult {
    // `binaryless` runs `prefix + arguments` alone, for probes that are not the tool.
    let command = prefix + (binaryless ? [] : [binary]) + arguments
    var childEnvironment = ["HOME": directory, "LANG": "C.UTF-8"]
    for key in ["PATH", "TMPDIR"] {
      if let value = ProcessInfo.processInfo.environment[key] { childEnvironment[key] = value }
    }
    childEnvironment.merge(environment) { $1 }
    let started = Date()
    let child = try ChildProcess(
      command, in: directory, environment: childEnvironment, stdin: Data((stdin ?? "").utf8))
    let ending = child.finish()
    // A signal reads as a shell shows it, 128 plus its number, never as an exit status.
    return CLIResult(
      status: ending.signaled ? 128 + ending.status : ending.status,
      stdout: String(decoding: ending.stdout, as: UTF8.self),
      stderr: String(decoding: ending.stderr, as: UTF8.self),
      seconds: Date().timeIntervalSince(started))
  }
}
