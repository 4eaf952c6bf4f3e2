import EntitlementCacheCLI

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `simulate`'s script reader (`ScriptParser.parse`) on the input: a script, or one error with
/// a message (the field's JSON path and the problem); the same bytes give the same answer
/// twice.
enum SimulateScriptTarget {
  static func run(_ data: Data) {
    let first = Result { () throws(ScriptError) in try ScriptParser.parse(data) }
    let second = Result { () throws(ScriptError) in try ScriptParser.parse(data) }
    switch (first, second) {
    case (.success, .success):
      break
    case (.failure(let error), .failure(let again)):
      require(!error.message.isEmpty, "a script error has no message")
      require(error == again, "the same script fails two ways: \(error.message), \(again.message)")
    default:
      require(false, "the same script parses once and fails once")
    }
  }
}
