import Foundation
import PackagePlugin

/// Turns `Migrations/NNNN_name.sql` at the package root into one generated Swift file, so the
/// schema's single source of truth is compiled into the library and an app or a copied CLI
/// binary never looks for `.sql` files on disk.
@main
struct EmbedMigrations: BuildToolPlugin {
  func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
    let migrations = context.package.directoryURL.appending(path: "Migrations")
    let sqlFiles = try FileManager.default
      .contentsOfDirectory(at: migrations, includingPropertiesForKeys: nil)
      .filter { $0.pathExtension == "sql" }
      .sorted { $0.lastPathComponent < $1.lastPathComponent }
    let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
    return [
      .buildCommand(
        displayName: "Embedding \(sqlFiles.count) migrations",
        executable: try context.tool(named: "migration-embedder").url,
        arguments: [output.path()] + sqlFiles.map { $0.path() },
        inputFiles: sqlFiles,
        outputFiles: [output]
      )
    ]
  }
}
