// The generator behind scripts/generate-migrations.sh.
//
// Usage: migration-embedder OUTPUT.swift NNNN_name.sql...
//
// Writes `EmbeddedMigrations.all`, the migrations in file-name order. File names must be
// `NNNN_name.sql` with versions 1, 2, 3... and no gaps, so a missing or misnumbered file fails
// the script (and MigrationSourceTests) instead of shipping a schema that differs between builds.
import Foundation

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("migration-embedder: error: \(message)\n".utf8))
  exit(1)
}

let arguments = CommandLine.arguments.dropFirst()
guard let outputPath = arguments.first else { fail("usage: migration-embedder OUTPUT SQL...") }

var entries: [String] = []
for (index, path) in arguments.dropFirst().enumerated() {
  let fileName = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
  let parts = fileName.split(separator: "_", maxSplits: 1)
  guard parts.count == 2, parts[0].count == 4, let version = Int(parts[0]) else {
    fail("\(path): name must be NNNN_name.sql")
  }
  guard version == index + 1 else {
    fail("\(path): expected version \(index + 1), found \(version)")
  }
  guard let sql = try? String(contentsOfFile: path, encoding: .utf8) else {
    fail("\(path): cannot read as UTF-8")
  }
  // A raw string delimiter longer than any run of '#' in the SQL keeps the text verbatim.
  var longestHashRun = 0
  var run = 0
  for character in sql {
    run = character == "#" ? run + 1 : 0
    longestHashRun = max(longestHashRun, run)
  }
  let hashes = String(repeating: "#", count: longestHashRun + 1)
  // Every line indented as deep as the closing delimiter, which Swift strips again: the SQL
  // keeps its own indentation, and the file is laid out as the formatter wants it.
  let indent = "        "
  let body = sql.split(separator: "\n", omittingEmptySubsequences: false)
    .map { $0.isEmpty ? "" : indent + $0 }
    .joined(separator: "\n")
  entries.append(
    "    Migration(\n"
      + "      version: \(version),\n"
      + "      name: \(String(reflecting: String(parts[1]))),\n"
      + "      sql: \(hashes)\"\"\"\n\(body)\n\(indent)\"\"\"\(hashes)\n"
      + "    ),\n")
}

let source =
  "// Generated from Migrations/*.sql by scripts/generate-migrations.sh. Do not edit: change\n"
  + "// the .sql files and run the script; MigrationSourceTests fails while the two differ.\n\n"
  + "enum EmbeddedMigrations {\n"
  + "  static let all: [Migration] = [\n"
  + entries.joined()
  + "  ]\n"
  + "}\n"
do {
  try Data(source.utf8).write(to: URL(fileURLWithPath: outputPath), options: .atomic)
} catch {
  fail("cannot write \(outputPath): \(error)")
}
