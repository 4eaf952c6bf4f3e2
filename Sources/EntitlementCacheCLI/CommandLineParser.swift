import EntitlementCache

/// The tool's whole argument grammar: `entitlement-cache COMMAND [--flag VALUE | --switch]...`.
///
/// Deliberately small: long flags only (plus `-h`), `--flag VALUE` or `--flag=VALUE`, no
/// positional arguments, no repeated flags. Anything else is a usage error that names the
/// problem and, for a misspelt command or flag, the nearest valid one.

/// One flag a command accepts.
struct Flag: Sendable {
  /// `--sdk-key`.
  let name: String
  /// The placeholder of its value (`K`); nil for a switch such as `--json`.
  let valueName: String?
  /// One line of help.
  let help: String
  /// The help section it is listed under.
  let group: String

  init(_ name: String, _ valueName: String? = nil, _ help: String, group: String = "Options") {
    self.name = name
    self.valueName = valueName
    self.help = help
    self.group = group
  }
}

/// A command's name, flags and help.
package struct CommandSpec: Sendable {
  package let name: String
  /// One line for the overview.
  let summary: String
  /// `check SCOPE --entitlement KEY [options]`.
  let usage: String
  /// Paragraphs after the usage line.
  let discussion: String
  let flags: [Flag]
  /// Paragraphs after the flags.
  var notes: [String] = []
  /// Complete command lines a user can paste.
  let examples: [String]
}

/// The flags of one invocation, validated against its command.
package struct ParsedArguments: Sendable {
  package let command: CommandSpec
  fileprivate(set) var values: [String: String] = [:]
  fileprivate(set) var switches: Set<String> = []

  /// The value of a flag that takes one; nil when absent.
  package func value(_ flag: String) -> String? { values[flag] }

  /// Whether a switch (or a flag with a value) was given.
  package func has(_ flag: String) -> Bool { switches.contains(flag) || values[flag] != nil }
}

/// What the command line asks for.
package enum ParseOutcome: Sendable {
  case run(ParsedArguments)
  /// Print this help text and exit 0.
  case help(String)
}

package enum CommandLineParser {
  static let toolName = "entitlement-cache"

  /// Parses `arguments` (without the program name).
  package static func parse(
    _ arguments: [String], commands: [CommandSpec]
  ) throws(CLIError) -> ParseOutcome {
    // `--version` is the `version` command, as every tool spells it.
    var arguments = arguments
    if arguments.first == "--version" { arguments[0] = "version" }
    guard let first = arguments.first else {
      throw CLIError.usage("no command given; try '\(toolName) --help'")
    }
    if ["-h", "--help", "help"].contains(first) {
      if first == "help", arguments.count > 1 {
        return .help(help(for: try command(named: arguments[1], in: commands)))
      }
      return .help(overview(commands))
    }
    if first.hasPrefix("-") {
      throw CLIError.usage("\(first) must follow a command; try '\(toolName) --help'")
    }
    let command = try command(named: first, in: commands)
    var parsed = ParsedArguments(command: command)
    var index = 1
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if argument == "-h" || argument == "--help" { return .help(help(for: command)) }
      guard argument.hasPrefix("--"), argument.count > 2 else {
        throw CLIError.usage(
          "\(command.name): unexpected argument '\(TerminalText.excerpt(argument))'")
      }
      var name = argument
      var inlineValue: String?
      if let equals = argument.firstIndex(of: "=") {
        name = String(argument[..<equals])
        inlineValue = String(argument[argument.index(after: equals)...])
      }
      guard let flag = command.flags.first(where: { $0.name == name }) else {
        let hint = nearest(name, in: command.flags.map(\.name)).map { "; did you mean \($0)?" }
        throw CLIError.usage(
          "\(command.name): unknown flag \(TerminalText.excerpt(name))\(hint ?? "; see '\(toolName) \(command.name) --help'")"
        )
      }
      guard !parsed.has(name) else {
        throw CLIError.usage("\(command.name): \(name) given more than once")
      }
      guard let valueName = flag.valueName else {
        guard inlineValue == nil else {
          throw CLIError.usage("\(command.name): \(name) takes no value")
        }
        parsed.switches.insert(name)
        continue
      }
      if let inlineValue {
        parsed.values[name] = inlineValue
      } else if index < arguments.count, !arguments[index].hasPrefix("--") {
        parsed.values[name] = arguments[index]
        index += 1
      } else {
        throw CLIError.usage("\(command.name): \(name) needs a value (\(name) \(valueName))")
      }
    }
    return .run(parsed)
  }

  private static func command(named name: String, in commands: [CommandSpec]) throws(CLIError)
    -> CommandSpec
  {
    if let command = commands.first(where: { $0.name == name }) { return command }
    let hint = nearest(name, in: commands.map(\.name)).map { "; did you mean '\($0)'?" }
    throw CLIError.usage(
      "unknown command '\(TerminalText.excerpt(name))'\(hint ?? "; try '\(toolName) --help'")")
  }

  /// The arguments as text, each checked to be UTF-8.
  ///
  /// An argument that is not is refused, never repaired: decoding a user ID lossily would map
  /// different IDs to one scope, and another user's cached access would read as this one's.
  /// The message names the flag the value belongs to, and never repeats the bytes (they may
  /// be a user ID).
  package static func text(of arguments: [[UInt8]], commands: [CommandSpec]) throws(CLIError)
    -> [String]
  {
    var texts: [String] = []
    for (index, bytes) in arguments.enumerated() {
      if let text = String(validatingUTF8Bytes: bytes) {
        texts.append(text)
        continue
      }
      let problem =
        "not valid UTF-8; arguments are text, and invalid bytes are refused, never repaired"
      if let equals = bytes.firstIndex(of: UInt8(ascii: "=")), bytes.starts(with: Array("--".utf8)),
        let name = String(validatingUTF8Bytes: bytes[..<equals])
      {
        throw CLIError.usage("\(name): \(problem)")
      }
      let command = texts.first.flatMap { name in commands.first { $0.name == name } }
      if let previous = texts.last, index >= 2, previous.hasPrefix("--"),
        command?.flags.first(where: { $0.name == previous })?.valueName != nil
      {
        throw CLIError.usage("\(previous): \(problem)")
      }
      throw CLIError.usage("argument \(index + 1): \(problem)")
    }
    return texts
  }

  /// The candidate closest to `word` by edit distance, when it is close enough to be a typo.
  static func nearest(_ word: String, in candidates: [String]) -> String? {
    let characters = Array(word)
    // A third of the word may be wrong; short words still allow two edits.
    let tolerance = max(2, characters.count / 3)
    var best: (candidate: String, distance: Int)?
    for candidate in candidates {
      let other = Array(candidate)
      // The distance is at least the difference in length: a candidate further off than the
      // tolerance cannot be the answer, and a long mistyped argument costs nothing to refuse.
      guard abs(other.count - characters.count) <= tolerance else { continue }
      let distance = editDistance(characters, other)
      if distance <= tolerance, distance < best?.distance ?? .max {
        best = (candidate, distance)
      }
    }
    if let best { return best.candidate }
    // A prefix (`--entitle`) or the word without its dashes (`--json` for `json`).
    return candidates.first { $0.hasPrefix(word) || $0 == "--" + word }
  }

  /// Levenshtein distance over characters.
  private static func editDistance(_ lhs: [Character], _ rhs: [Character]) -> Int {
    // Two rows, reused: one allocation each however long the words.
    var previous = Array(0...rhs.count)
    var current = previous
    for (i, left) in lhs.enumerated() {
      current[0] = i + 1
      for (j, right) in rhs.enumerated() {
        current[j + 1] = min(
          previous[j + 1] + 1, current[j] + 1, previous[j] + (left == right ? 0 : 1))
      }
      swap(&previous, &current)
    }
    return previous[rhs.count]
  }

  // MARK: Help

  /// `entitlement-cache --help`.
  static func overview(_ commands: [CommandSpec]) -> String {
    var lines = [
      "\(toolName) — inspect and edit an EntitlementCache database",
      "",
      "Usage: \(toolName) COMMAND [options]",
      "",
      "Commands:",
    ]
    let width = commands.map(\.name.count).max() ?? 0
    for command in commands {
      lines.append("  " + pad(command.name, width) + "  " + command.summary)
    }
    lines += [
      "",
      "SCOPE is --sdk-key K --installation I --environment production|sandbox|local --user U.",
      "Every command takes --json and --help; those that read or write a database take",
      "--db PATH and --now TIME.",
      "entitlement-cache --version prints the version, as the version command does.",
      "Exit status: 0 success (check: granted), 1 check not granted, 2 usage or input error,",
      "3 storage error.",
      "",
      "Start here:",
      "  \(toolName) demo",
      "  \(toolName) check --help",
    ]
    return lines.joined(separator: "\n") + "\n"
  }

  /// `entitlement-cache COMMAND --help`.
  static func help(for command: CommandSpec) -> String {
    var lines = [
      "\(toolName) \(command.name) — \(command.summary)",
      "",
      "Usage: \(toolName) \(command.usage)",
    ]
    if !command.discussion.isEmpty {
      lines += ["", command.discussion]
    }
    let all = command.flags + [Flag("--help", nil, "show this help")]
    let width = all.map { label($0).count }.max() ?? 0
    var groups: [String] = []
    for flag in all where !groups.contains(flag.group) { groups.append(flag.group) }
    for group in groups {
      lines += ["", "\(group):"]
      for flag in all where flag.group == group {
        lines.append("  " + pad(label(flag), width) + "  " + flag.help)
      }
    }
    for note in command.notes { lines += ["", note] }
    lines += ["", command.examples.count == 1 ? "Example:" : "Examples:"]
    lines += command.examples.map { "  " + $0 }
    return lines.joined(separator: "\n") + "\n"
  }

  private static func label(_ flag: Flag) -> String {
    flag.valueName.map { "\(flag.name) \($0)" } ?? flag.name
  }

  private static func pad(_ text: String, _ width: Int) -> String {
    text + String(repeating: " ", count: max(0, width - text.count))
  }
}
