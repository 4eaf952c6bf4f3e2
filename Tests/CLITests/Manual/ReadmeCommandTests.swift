import Foundation
import TestSupport
import Testing

/// The README shows the tool in a few commands it does not run (they need a snapshot and a
/// script): each names a command the tool has, with flags that command's help lists, so the
/// front page cannot drift from the tool. The manual's sessions are run in full
/// (CommandLineManualTests).
@Suite struct ReadmeCommandTests {
  /// The README's `entitlement-cache` command lines, continuations joined.
  static func commands() throws -> [[String]] {
    let blocks = Documentation.fencedBlocks("sh", in: try Documentation.readme())
    var commands: [[String]] = []
    for block in blocks {
      var pending = ""
      for line in block.components(separatedBy: "\n") {
        let code = line.components(separatedBy: "  #").first ?? line
        pending += code.trimmingCharacters(in: .whitespaces)
        if pending.hasSuffix("\\") {
          pending = String(pending.dropLast()) + " "
          continue
        }
        let words = pending.split(separator: " ").map(String.init)
        if words.first == "entitlement-cache" { commands.append(words) }
        pending = ""
      }
    }
    return commands
  }

  @Test func everyCommandAndFlagTheReadmeShowsIsTheTools() throws {
    let commands = try Self.commands()
    #expect(commands.count >= 5, "the README shows \(commands.count) commands")
    let directory = try TemporaryDirectory()
    for words in commands {
      let name = try #require(words.dropFirst().first)
      let help = try CLI.run([name, "--help"], in: directory.path)
      #expect(help.status == 0, "`entitlement-cache \(name) --help` exited \(help.status)")
      for flag in words where flag.hasPrefix("--") {
        #expect(
          help.stdout.contains(flag + " ") || help.stdout.contains(flag + "\n"),
          "the README passes \(flag) to `\(name)`, which its help does not list")
      }
    }
  }
}
