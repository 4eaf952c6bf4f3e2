import EntitlementCache
import EntitlementCacheCLI

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The tool's argument parser with the real command specs, on the input split into arguments
/// at each newline (so a seed is a command line written one argument a line), as bytes: the
/// tool's own UTF-8 check comes first, as in the executable. Any outcome but a crash is an
/// answer; besides:
/// - an argument that is not UTF-8 fails the check, and one that is passes it unchanged;
/// - help is non-empty text ending in a newline;
/// - a parse names the command asked for and has every `--flag` given;
/// - the flags read as library values (the invocation's `--now`, the scope, the policy) or
///   fail as usage errors, and a policy read has finite, non-negative windows;
/// - every failure is a usage error (exit status 2) with a non-empty message.
enum CLIArgumentsTarget {
  /// The standard library's own strict UTF-8 check, the oracle: the parser's check is the
  /// package's `String(validatingUTF8Bytes:)`, so the oracle must not be.
  static func isUTF8(_ bytes: [UInt8]) -> Bool {
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
      return String(validating: bytes, as: UTF8.self) != nil
    }
    var iterator = bytes.makeIterator()
    var decoder = UTF8()
    while true {
      switch decoder.decode(&iterator) {
      case .scalarValue: continue
      case .emptyInput: return true
      case .error: return false
      }
    }
  }

  static func run(_ data: Data) {
    var raw = Array(data).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
      .map(Array.init)
    if raw.last?.isEmpty == true { raw.removeLast() }
    let allText = raw.allSatisfy(isUTF8)
    do throws(CLIError) {
      let arguments = try CommandLineParser.text(of: raw, commands: commandSpecs)
      require(allText, "an argument that is not UTF-8 passed the check")
      require(arguments.map { Array($0.utf8) } == raw, "the check changed an argument")
      switch try CommandLineParser.parse(arguments, commands: commandSpecs) {
      case .help(let text):
        require(!text.isEmpty && text.hasSuffix("\n"), "help text is empty or unterminated")
      case .run(let parsed):
        // `--version` is the version command's other spelling.
        let asked = arguments.first == "--version" ? "version" : arguments.first
        require(parsed.command.name == asked, "parsed as another command")
        for argument in arguments.dropFirst() where argument.hasPrefix("--") {
          let name = String(argument.prefix { $0 != "=" })
          require(parsed.has(name), "\(name) was given but the parse lacks it")
        }
        try readValues(parsed)
      }
    } catch {
      require(
        allText || error.message.contains("not valid UTF-8"), "text was refused as not UTF-8")
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
