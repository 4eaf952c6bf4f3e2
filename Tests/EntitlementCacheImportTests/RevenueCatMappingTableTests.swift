import Foundation
import TestSupport
import Testing

/// The module page's mapping table and these tests stay one row to one test.
@Suite("RevenueCat v1: the mapping table")
struct RevenueCatMappingTableTests {
  static let page =
    "Sources/EntitlementCacheImport/EntitlementCacheImport.docc/EntitlementCacheImport.md"

  @Test func everyRowNamesOneTestAndEveryTestHasARow() throws {
    let text = try String(
      contentsOf: Documentation.root.appending(path: Self.page), encoding: .utf8)
    let rows = text.components(separatedBy: "\n").filter {
      $0.range(of: #"^\| [0-9]+ \|"#, options: .regularExpression) != nil
    }
    let numbers = rows.compactMap {
      Int($0.split(separator: "|")[0].trimmingCharacters(in: .whitespaces))
    }
    #expect(numbers == Array(1...rows.count))
    let named = rows.compactMap { row in
      row.split(separator: "|").last.map {
        $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(
          in: CharacterSet(charactersIn: "`"))
      }
    }

    let folder = Documentation.root.appending(path: "Tests/EntitlementCacheImportTests")
    var tests: [String] = []
    for file in try FileManager.default.contentsOfDirectory(atPath: folder.path)
    where file.hasSuffix(".swift") && !file.hasPrefix("RevenueCatMappingTable")
      // The adoption article's example is tested there, not a row of the table.
      && !file.hasPrefix("RevenueCatAdoptionExample")
    {
      let source = try String(contentsOf: folder.appending(path: file), encoding: .utf8)
      let pattern = try NSRegularExpression(pattern: #"@Test(?:\([^)]*\))?\s+func\s+(\w+)"#)
      let range = NSRange(source.startIndex..., in: source)
      for match in pattern.matches(in: source, range: range) {
        if let name = Range(match.range(at: 1), in: source) { tests.append(String(source[name])) }
      }
    }
    #expect(named.sorted() == tests.sorted())
    #expect(Set(named).count == named.count)
  }
}
