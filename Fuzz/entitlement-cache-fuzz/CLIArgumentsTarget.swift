import EntitlementCache
import EntitlementCacheCLI

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The tool's argument parser with the real command specs, on the input split into arguments
/// at each newline (so a seed is a command line written one argument a line). Any outcome but
/// a crash is an answer; besides:
/// - help is non-empty text ending in a newline;
/// - a parse names the command asked for and has every `--flag` given;
/// - the flags read as library values (the invocation's `--now`, the scope, the policy) or
///   fail as usage errors, and a policy read has finite, non-negative windows;
/// - every failure is a usage error (exit status 2) with a non-empty message.
enum CLIArgumentsTarget {
  static func run(_ data: Data) {
    var arguments = String(decoding: data, as: UTF8.self)
      .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    if arguments.last == "" { arguments.removeLast() }
    do throws(CLIError) {
      switch try ArgumentParser.parse(arguments, commands: commandSpecs) {
      case .help(let text):
        require(!text.isEmpty && text.hasSuffix("\n"), "help text is empty or unterminated")
      case .run(let parsed):
        require(parsed.command.name == arguments.first, "parsed as another command")
        for argument in arguments.dropFirst() where argument.hasPrefix("--") {
          let name = String(argument.prefix { $0 != "=" })
          require(parsed.has(name), "\(name) was given but the parse lacks it")
        }
        try readValues(parsed)
      }
    } catch {
      require(error.status == .usage, "a parse failed with status \(error.status)")
      require(!error.message.isEmpty, "a usage error has no message")
    }
  }

  /// What the commands do with the flags before touching a file.
  private static func readValues(_ parsed: ParsedArguments) throws(CLIError) {
    let invocation = try Invocation(parsed)
    let policy = try invocation.policy()
    for (name, window) in [
      ("staleAfter", policy.staleAfter),
      ("nonExpiringMaxOfflineAge", policy.nonExpiringMaxOfflineAge),
      ("maxSnapshotAge", policy.maxSnapshotAge ?? 0),
      ("clockRollbackTolerance", policy.clockRollbackTolerance),
    ] {
      require(window.isFinite && window >= 0, "policy \(name) read as \(window)")
    }
    if invocation.hasScopeFlags {
      _ = try invocation.scope()
    }
  }
}
