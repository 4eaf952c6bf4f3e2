import Foundation

/// The package's documentation as the tests that keep it true read it: the README at the root,
/// the DocC articles of the library's catalog and the tool's manual in its own.
public enum Documentation {
  /// The repository's root: three folders up from this file.
  public static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// The path of the article `name` (`"Storage"`, or `"CommandLineTool"`, the tool's manual),
  /// relative to the root.
  public static func articlePath(_ name: String) -> String {
    name == "CommandLineTool"
      ? "Sources/EntitlementCacheCLI/EntitlementCacheCLI.docc/CommandLineTool.md"
      : "Sources/EntitlementCache/EntitlementCache.docc/Articles/\(name).md"
  }

  /// The text of the article `name`.
  public static func article(_ name: String) throws -> String {
    try String(contentsOf: root.appending(path: articlePath(name)), encoding: .utf8)
  }

  /// The code between the lines `// MARKER: begin` and `// MARKER: end` of the file at `path`
  /// (relative to the root): an example a test compiles and runs, which an article shows byte
  /// for byte, so it can be checked with `article.contains("```swift\n" + code + "```\n")`.
  public static func markedExample(in path: String, marker: String) throws -> String {
    let source = try String(contentsOf: root.appending(path: path), encoding: .utf8)
    guard let begin = source.range(of: "// \(marker): begin\n"),
      let end = source.range(of: "// \(marker): end\n", range: begin.upperBound..<source.endIndex)
    else { throw MissingMarkers(path: path, marker: marker) }
    // An end marker indented with its code leaves its indentation after the last line.
    var code = String(source[begin.upperBound..<end.lowerBound])
    while code.hasSuffix(" ") { code.removeLast() }
    return code
  }

  /// Whether the article `name` shows, byte for byte in a Swift code block, the example
  /// between `marker`'s lines in the file at `path` (``markedExample(in:marker:)``).
  public static func article(
    _ name: String, showsExampleIn path: String, marker: String
  ) throws -> Bool {
    let code = try markedExample(in: path, marker: marker)
    return try article(name).contains("```swift\n" + code + "```\n")
  }

  /// A file without the markers ``markedExample(in:marker:)`` looks for.
  public struct MissingMarkers: Error, CustomStringConvertible {
    /// The file.
    public var path: String
    /// The marker it lacks.
    public var marker: String
    /// The file and the marker.
    public var description: String { "\(path): no \"// \(marker): begin\" and \"end\" lines" }
  }

  /// The text of the README.
  public static func readme() throws -> String {
    try String(contentsOf: root.appending(path: "README.md"), encoding: .utf8)
  }

  /// The fenced blocks of `text` marked `<!-- file: NAME -->` on the line before, in order:
  /// each one's name and its text, ending in a newline, as a session writes it to that file.
  public static func namedFiles(in text: String) -> [(name: String, content: String)] {
    let lines = text.components(separatedBy: "\n")
    var files: [(name: String, content: String)] = []
    var index = 0
    while index < lines.count {
      let line = lines[index]
      if line.hasPrefix("<!-- file: "), line.hasSuffix(" -->"), index + 1 < lines.count,
        lines[index + 1].hasPrefix("```")
      {
        let name = String(line.dropFirst("<!-- file: ".count).dropLast(" -->".count))
        var body: [String] = []
        index += 2
        while index < lines.count, lines[index] != "```" {
          body.append(lines[index])
          index += 1
        }
        files.append((name, body.joined(separator: "\n") + "\n"))
      }
      index += 1
    }
    return files
  }

  /// The blocks fenced as ```` ```language ```` in `text`, in order, without their fences.
  public static func fencedBlocks(_ language: String, in text: String) -> [String] {
    var blocks: [String] = []
    var current: [String]?
    for line in text.components(separatedBy: "\n") {
      if var open = current {
        if line == "```" {
          blocks.append(open.joined(separator: "\n"))
          current = nil
        } else {
          open.append(line)
          current = open
        }
      } else if line == "```" + language {
        current = []
      }
    }
    return blocks
  }
}
