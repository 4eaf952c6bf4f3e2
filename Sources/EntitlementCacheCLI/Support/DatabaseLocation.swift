#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif
#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where the database is when `--db` is absent: `$ENTITLEMENT_CACHE_DB`, else
/// `$XDG_DATA_HOME/entitlement-cache/cache.sqlite`, else
/// `~/.local/share/entitlement-cache/cache.sqlite`.
enum DatabaseLocation {
  /// The path to use, and whether it is the per-user default (whose directory the tool may
  /// create) rather than one the user named.
  static func resolve(_ flag: String?) throws(CLIError) -> (path: String, isDefault: Bool) {
    if let flag {
      guard !flag.isEmpty else { throw CLIError.usage("--db: empty path") }
      try InputFile.checkLength(of: flag, named: "--db")
      return (flag, false)
    }
    if let variable = try environment("ENTITLEMENT_CACHE_DB") {
      try InputFile.checkLength(of: variable, named: "$ENTITLEMENT_CACHE_DB")
      return (variable, false)
    }
    guard let path = try defaultPath() else {
      throw CLIError.usage("no --db given and neither $XDG_DATA_HOME nor $HOME is set")
    }
    return (path, true)
  }

  /// The per-user default, or nil when neither `$XDG_DATA_HOME` nor `$HOME` is set.
  static func defaultPath() throws(CLIError) -> String? {
    // The XDG spec says a relative XDG_DATA_HOME is invalid and must be ignored.
    if let data = try environment("XDG_DATA_HOME"), data.hasPrefix("/") {
      return data + "/entitlement-cache/cache.sqlite"
    }
    return try environment("HOME").map { $0 + "/.local/share/entitlement-cache/cache.sqlite" }
  }

  /// Creates the default location's directory (mode 0700: the file holds hashes of user
  /// identities), so the first `put` works on a fresh machine.
  static func createDirectory(for path: String) throws(CLIError) {
    guard let slash = path.lastIndex(of: "/") else { return }
    let directory = String(path[..<slash])
    do {
      try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    } catch {
      throw CLIError.storage("\(directory): cannot create the database directory")
    }
  }

  /// Why a write to the database at `path` was refused as read-only, naming the file that is
  /// not writable: the `-shm` or `-wal` beside it (which a read-only open of a read-only file
  /// leaves behind, with the file's mode, long after the file is writable again), the file
  /// itself, or its directory.
  static func readOnlyExplanation(for path: String, operation: String) -> String {
    let companions = [path + "-shm", path + "-wal"]
    let fileIsWritable = isWritable(path)
    if fileIsWritable,
      let companion = companions.first(where: { InputFile.exists($0) && !isWritable($0) })
    {
      // chmod is the safe recovery for either file. Deleting the -shm is safe too when no
      // process has the database open (SQLite rebuilds it), but never the -wal, which may hold
      // committed transactions not yet copied into the database.
      return "\(companion): not writable, though \(path) is, so SQLite cannot \(operation) "
        + "(a read-only open of a read-only database leaves it so); make it writable again "
        + "(chmod u+w \(companion)) and run again"
    }
    guard fileIsWritable else {
      return "\(path): not writable, so the tool cannot \(operation)"
    }
    let directory = parent(of: path) ?? "."
    return "\(path): cannot \(operation): the database is read-only to SQLite (is \(directory) "
      + "writable, for the -wal and -shm files beside it?)"
  }

  private static func isWritable(_ path: String) -> Bool { access(path, W_OK) == 0 }

  /// Whether `path` is a regular file of 0 bytes (following a symbolic link).
  static func isEmptyFile(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && info.st_size == 0
  }

  /// The directory `path` would be created in, when it does not exist (`ENOENT`, `ENOTDIR`,
  /// following links, so a link to nothing is missing too): one that a
  /// folder above it keeps this process from seeing is not called missing, and the library
  /// refuses the path as there but refused.
  static func missingDirectory(of path: String) -> String? {
    guard let parent = parent(of: path) else { return nil }
    var status = stat()
    return stat(parent, &status) != 0 && (errno == ENOENT || errno == ENOTDIR) ? parent : nil
  }

  /// Whether `path` is there, as something other than a directory.
  static func isNotADirectory(_ path: String) -> Bool {
    var status = stat()
    return stat(path, &status) == 0 && (status.st_mode & S_IFMT) != S_IFDIR
  }

  /// The directory part of `path`; nil for a bare file name.
  static func parent(of path: String) -> String? {
    guard let slash = path.lastIndex(of: "/") else { return nil }
    return slash == path.startIndex ? "/" : String(path[..<slash])
  }

  /// The value of the environment variable `name`; nil when unset or empty. A value that is
  /// not UTF-8 is refused, never repaired: a repaired path names another file.
  static func environment(_ name: String) throws(CLIError) -> String? {
    guard let value = getenv(name) else { return nil }
    guard let text = String(validatingCString: value) else {
      throw CLIError.usage(
        "$\(name): not valid UTF-8; paths are text, and invalid bytes are refused, never repaired"
      )
    }
    return text.isEmpty ? nil : text
  }
}
