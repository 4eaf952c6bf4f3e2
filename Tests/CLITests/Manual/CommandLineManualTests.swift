import Foundation
import TestSupport
import Testing

/// The tool's manual (<doc:CommandLineTool>) shows real sessions: every `$ entitlement-cache`
/// line in a ```console block is run, in order, in one directory, and what it prints must be
/// exactly the lines below it. A block preceded by `<!-- file: NAME -->` is written to NAME
/// first, so the session can read it.
@Suite struct CommandLineManualTests {
  struct Example {
    var arguments: [String]
    var stdinFile: String?
    var expected: String
    var line: Int
  }

  static let manualPath = Documentation.articlePath("CommandLineTool")

  /// Splits a command line the way a POSIX shell would for the simple forms the manual uses:
  /// words, single and double quotes, and `< FILE`.
  static func words(_ line: String) -> (arguments: [String], stdinFile: String?) {
    var words: [String] = []
    var current = ""
    var quote: Character?
    var inWord = false
    for character in line {
      if let open = quote {
        if character == open { quote = nil } else { current.append(character) }
      } else if character == "'" || character == "\"" {
        quote = character
        inWord = true
      } else if character == " " {
        if inWord { words.append(current) }
        current = ""
        inWord = false
      } else {
        current.append(character)
        inWord = true
      }
    }
    if inWord { words.append(current) }
    var stdinFile: String?
    if let index = words.firstIndex(of: "<"), index + 1 < words.count {
      stdinFile = words[index + 1]
      words.removeSubrange(index...(index + 1))
    }
    return (words, stdinFile)
  }

  static func parse(_ section: String, firstLine: Int) throws -> (
    files: [(String, String)], examples: [Example]
  ) {
    let files = Documentation.namedFiles(in: section).map { ($0.name, $0.content) }
    let lines = section.components(separatedBy: "\n")
    var examples: [Example] = []
    var index = 0
    while index < lines.count {
      let line = lines[index]
      if line.hasPrefix("```") {
        let isConsole = line == "```console"
        var body: [String] = []
        index += 1
        while index < lines.count, lines[index] != "```" {
          body.append(lines[index])
          index += 1
        }
        if isConsole {
          var position = 0
          while position < body.count {
            guard body[position].hasPrefix("$ ") else {
              position += 1
              continue
            }
            let startLine = firstLine + index - body.count + position
            var command = String(body[position].dropFirst(2))
            while command.hasSuffix("\\"), position + 1 < body.count {
              position += 1
              command =
                String(command.dropLast()) + " "
                + body[position].trimmingCharacters(in: .whitespaces)
            }
            position += 1
            var output: [String] = []
            while position < body.count, !body[position].hasPrefix("$ ") {
              output.append(body[position])
              position += 1
            }
            let (words, stdinFile) = words(command)
            examples.append(
              Example(
                arguments: words, stdinFile: stdinFile,
                expected: output.isEmpty ? "" : output.joined(separator: "\n") + "\n",
                line: startLine))
          }
        }
      }
      index += 1
    }
    return (files, examples)
  }

  // The manual replays `demo` and `simulate`, which need task executors.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test func everyExampleOutputIsWhatTheBinaryPrints() throws {
    let manual = try Documentation.article("CommandLineTool")
    let (files, examples) = try Self.parse(manual, firstLine: 1)
    #expect(examples.count >= 10, "the manual shows too few examples")
    let directory = try TemporaryDirectory()
    for (name, content) in files {
      try directory.write(name, content)
    }
    for example in examples {
      #expect(example.arguments.first == "entitlement-cache", "\(Self.manualPath):\(example.line)")
      let stdin = try example.stdinFile.map {
        try String(contentsOfFile: directory.path($0), encoding: .utf8)
      }
      let result = try CLI.run(
        Array(example.arguments.dropFirst()), in: directory.path, stdin: stdin,
        environment: ["TMPDIR": directory.path])
      // The demo prints where it wrote its timeline: in the temporary folder, /tmp for a
      // reader, this test's directory here.
      let actual = (result.stdout + result.stderr).replacing(directory.path + "/", with: "/tmp/")
      #expect(
        actual == example.expected,
        "\(Self.manualPath):\(example.line): `\(example.arguments.joined(separator: " "))` printed:\n\(actual)"
      )
    }
  }

  @Test func theParserReadsContinuationsQuotesAndRedirection() throws {
    let section = """
      <!-- file: a.json -->
      ```json
      {}
      ```
      ```console
      $ entitlement-cache put --db 'my cache.sqlite' \\
          --user "u 1" < a.json
      line one
      $ entitlement-cache scopes
      ```
      """
    let (files, examples) = try Self.parse(section, firstLine: 1)
    #expect(files.first?.0 == "a.json")
    #expect(files.first?.1 == "{}\n")
    #expect(examples.count == 2)
    #expect(
      examples.first?.arguments == [
        "entitlement-cache", "put", "--db", "my cache.sqlite", "--user", "u 1",
      ])
    #expect(examples.first?.stdinFile == "a.json")
    #expect(examples.first?.expected == "line one\n")
    #expect(examples.last?.expected == "")
  }
}
