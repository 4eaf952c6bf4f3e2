import EntitlementCache

/// A bad field of a script: its JSON path (`steps[3].do`) and what is wrong with it.
package struct ScriptError: Error, Sendable, Equatable {
  let path: String
  let problem: String

  /// `steps[3].do: unknown action "fly"`.
  package var message: String { path.isEmpty ? problem : "\(path): \(problem)" }
}

/// One value of a script and where it is, so every error names the field it is about.
struct ScriptNode: Sendable {
  let value: JSONValue
  /// `server.alice[0].latency`; empty for the whole script.
  let path: String

  func error(_ problem: String) -> ScriptError {
    ScriptError(path: path, problem: problem)
  }

  /// The value as an object, for reading its fields.
  func object() throws(ScriptError) -> ScriptObject {
    guard case .object(let fields) = value else { throw error("not an object") }
    return ScriptObject(fields: fields, path: path)
  }

  /// The value as an array, each element with its index in its path.
  func array() throws(ScriptError) -> [ScriptNode] {
    guard case .array(let items) = value else { throw error("not an array") }
    return items.enumerated().map { ScriptNode(value: $1, path: "\(path)[\($0)]") }
  }

  /// The value as a string, which must not be empty.
  func string() throws(ScriptError) -> String {
    guard case .string(let text) = value else { throw error("not a string") }
    guard !text.isEmpty else { throw error("empty") }
    return text
  }

  /// The value as true or false.
  func bool() throws(ScriptError) -> Bool {
    guard case .bool(let value) = value else { throw error("expected true or false") }
    return value
  }

  func integer() throws(ScriptError) -> Int64 {
    guard case .integer(let number) = value else { throw error("not a whole number") }
    return number
  }

  /// The value as one of `choices`, keyed by its script spelling; `kind` names the field in the
  /// error (`unknown policy "x" (conservative or serverSnapshot)`).
  func choice<Value>(_ kind: String, _ choices: KeyValuePairs<String, Value>) throws(ScriptError)
    -> Value
  {
    let text = try string()
    if let match = choices.first(where: { $0.key == text }) { return match.value }
    let names = choices.map(\.key)
    let listed =
      names.count > 1
      ? names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "") : names.joined()
    throw error("unknown \(kind) \"\(text)\" (\(listed))")
  }
}

/// The fields of one object of a script. Fields a reader never asks for are errors (see
/// ``rejectingOthers(than:)``), so a misspelt `latncy` is reported, not silently ignored.
struct ScriptObject: Sendable {
  let fields: [String: JSONValue]
  let path: String

  private func child(_ key: String) -> String {
    path.isEmpty ? key : "\(path).\(key)"
  }

  /// The field `key`; an error naming it when it is absent or null.
  func required(_ key: String, _ hint: String? = nil) throws(ScriptError) -> ScriptNode {
    guard let node = optional(key) else {
      throw ScriptError(path: child(key), problem: "missing" + (hint.map { " (\($0))" } ?? ""))
    }
    return node
  }

  /// The field `key`, or nil when it is absent or null.
  func optional(_ key: String) -> ScriptNode? {
    guard let value = fields[key], value != .null else { return nil }
    return ScriptNode(value: value, path: child(key))
  }

  /// Whether the object has `key` (null included).
  func has(_ key: String) -> Bool { fields[key] != nil }

  /// Throws for the first field, in sorted order, that is not in `known`, suggesting the
  /// nearest known one when it looks like a typo.
  func rejectingOthers(than known: [String]) throws(ScriptError) {
    guard let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) else { return }
    let hint = CommandLineParser.nearest(unknown, in: known).map { "; did you mean \"\($0)\"?" }
    throw ScriptError(path: child(unknown), problem: "unknown field" + (hint ?? ""))
  }
}
