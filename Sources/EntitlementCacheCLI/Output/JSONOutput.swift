import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A JSON value whose object keys keep the order they were written in, so `--json` output is
/// stable and reads in the order the tool's manual (<doc:CommandLineTool>) documents.
package indirect enum JSONOutput: Sendable {
  case null
  case bool(Bool)
  case integer(Int)
  case string(String)
  case array([JSONOutput])
  case object([(String, JSONOutput)])

  /// An ISO-8601 string, or null. An instant beyond the years 0000-9999 (a boundary computed
  /// from a server's year-9999 date) is clamped to the nearest one the tool reads back, so
  /// every date it prints, `--now` and a snapshot accept; the text form says "beyond 9999".
  static func date(_ date: Date?) -> JSONOutput {
    date.map { .string(TextOutput.clamped($0).iso8601) } ?? .null
  }

  /// A string, or null.
  static func text(_ text: String?) -> JSONOutput {
    text.map { .string($0) } ?? .null
  }

  /// Pretty-printed with two-space indentation and a final newline.
  package func rendered() -> String {
    var output = ""
    write(to: &output, indent: "")
    return output + "\n"
  }

  /// On one line with no spaces and every object's keys sorted, whatever order they were
  /// written in, with a final newline: one line of a JSON-lines log that is the same byte for
  /// byte on every run.
  func sortedLine() -> String {
    var output = ""
    writeSorted(to: &output)
    return output + "\n"
  }

  private func writeSorted(to output: inout String) {
    switch self {
    case .null, .bool, .integer, .string:
      write(to: &output, indent: "")
    case .array(let items):
      output += "["
      for (index, item) in items.enumerated() {
        if index > 0 { output += "," }
        item.writeSorted(to: &output)
      }
      output += "]"
    case .object(let fields):
      output += "{"
      for (index, (key, value)) in fields.sorted(by: { $0.0 < $1.0 }).enumerated() {
        if index > 0 { output += "," }
        Self.quote(key, into: &output)
        output += ":"
        value.writeSorted(to: &output)
      }
      output += "}"
    }
  }

  private func write(to output: inout String, indent: String) {
    switch self {
    case .null: output += "null"
    case .bool(let value): output += value ? "true" : "false"
    case .integer(let value): output += String(value)
    case .string(let value): Self.quote(value, into: &output)
    case .array(let items):
      guard !items.isEmpty else {
        output += "[]"
        return
      }
      output += "[\n"
      for (index, item) in items.enumerated() {
        output += indent + "  "
        item.write(to: &output, indent: indent + "  ")
        output += index < items.count - 1 ? ",\n" : "\n"
      }
      output += indent + "]"
    case .object(let fields):
      guard !fields.isEmpty else {
        output += "{}"
        return
      }
      output += "{\n"
      for (index, (key, value)) in fields.enumerated() {
        output += indent + "  "
        Self.quote(key, into: &output)
        output += ": "
        value.write(to: &output, indent: indent + "  ")
        output += index < fields.count - 1 ? ",\n" : "\n"
      }
      output += indent + "}"
    }
  }

  private static func quote(_ text: String, into output: inout String) {
    output += "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": output += "\\\""
      case "\\": output += "\\\\"
      case "\n": output += "\\n"
      case "\r": output += "\\r"
      case "\t": output += "\\t"
      // JSON requires the C0 controls escaped; the rest a terminal would act on
      // (``TerminalText``) are escaped too, so JSON read on a terminal is as safe as text.
      // A scalar beyond U+FFFF is written as its UTF-16 surrogate pair, as JSON spells it.
      case _ where TerminalText.isUnsafe(scalar):
        for unit in String(scalar).utf16 {
          let hex = String(unit, radix: 16)
          output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        }
      default: output.unicodeScalars.append(scalar)
      }
    }
    output += "\""
  }
}
