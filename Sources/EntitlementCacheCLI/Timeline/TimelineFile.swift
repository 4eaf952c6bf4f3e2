#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where `simulate --timeline` and the demo write a timeline's page.
enum TimelineFile {
  /// Refuses, before the run, a path the page must not or cannot be written to: an empty one;
  /// a directory, a device, a pipe or a link; one of `others` (the script, the run's database
  /// and its companions), whether or not it exists yet; any SQLite file; one in a folder that
  /// does not exist or that this process cannot write; a file it cannot write. Only a regular
  /// file is ever replaced.
  static func checkWritable(_ path: String, notOver others: [String] = []) throws(CLIError) {
    try InputFile.checkLength(of: path, named: "--timeline")
    guard !path.isEmpty else { throw CLIError.usage("--timeline: empty path") }
    let shown = TerminalText.excerpt(path)
    // A database the run will create is not there yet: compared by where its name leads.
    for other in others where samePlace(path, other) {
      throw CLIError.usage(
        "--timeline: \(shown) is \(TerminalText.excerpt(other)), which the page would replace")
    }
    var info = stat()
    if lstat(path, &info) == 0 {
      guard (info.st_mode & S_IFMT) == S_IFREG else {
        throw CLIError.usage(
          "--timeline: \(shown) is not a regular file (a directory, device, pipe or link); "
            + "it is never replaced")
      }
      for other in others where sameFile(path, other) {
        throw CLIError.usage("--timeline: \(shown) is \(other), which the page would replace")
      }
      if isSQLiteDatabase(path) {
        throw CLIError.usage("--timeline: \(shown) is an SQLite database; it is never replaced")
      }
      guard access(path, W_OK) == 0 else {
        throw CLIError.usage("--timeline: \(shown) cannot be written by this user")
      }
    }
    let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
    guard InputFile.isDirectory(folder) else {
      throw CLIError.usage("--timeline: the folder of \(shown) does not exist")
    }
    // The page is written beside the path, then moved over it.
    guard access(folder, W_OK | X_OK) == 0 else {
      throw CLIError.usage("--timeline: the folder of \(shown) cannot be written by this user")
    }
  }

  /// Writes the page of `timeline` to `path`, replacing what was there at once (the page is
  /// written beside it, then moved over it).
  ///
  /// - Parameter stopped: What to say at the end of a run that stopped early.
  static func write(
    _ timeline: Timeline, events: Int, title: String, to path: String, stopped: String? = nil
  ) throws(CLIError) {
    let page = TimelinePage.html(timeline, title: title, eventCount: events, stopped: stopped)
    do {
      try Data(page.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    } catch {
      throw CLIError.storage(
        "\(TerminalText.excerpt(path)): cannot write the timeline (\(error.localizedDescription))")
    }
  }

  /// Whether two paths name the same entry of the same folder, existing or not.
  private static func samePlace(_ a: String, _ b: String) -> Bool {
    func place(_ path: String) -> String? {
      let url = URL(fileURLWithPath: path)
      guard let folder = realpath(url.deletingLastPathComponent().path, nil) else { return nil }
      defer { free(folder) }
      return String(cString: folder) + "/" + url.lastPathComponent
    }
    guard let first = place(a), let second = place(b) else { return false }
    return first == second
  }

  private static func sameFile(_ a: String, _ b: String) -> Bool {
    var first = stat()
    var second = stat()
    guard stat(a, &first) == 0, stat(b, &second) == 0 else { return false }
    return first.st_dev == second.st_dev && first.st_ino == second.st_ino
  }

  /// Whether the file starts with SQLite's header string.
  private static func isSQLiteDatabase(_ path: String) -> Bool {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var header = [UInt8](repeating: 0, count: 16)
    return read(descriptor, &header, 16) == 16 && header == Array("SQLite format 3\0".utf8)
  }
}
