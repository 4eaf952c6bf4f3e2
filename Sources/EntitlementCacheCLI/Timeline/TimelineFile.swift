#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where `simulate --timeline` and the demo write a timeline's page.
enum TimelineFile {
  /// Refuses, before the run, a path the page could not be written to: an empty one, a
  /// directory, or one in a folder that does not exist.
  static func checkWritable(_ path: String) throws(CLIError) {
    try InputFile.checkLength(of: path, named: "--timeline")
    guard !path.isEmpty else { throw CLIError.usage("--timeline: empty path") }
    if InputFile.isDirectory(path) {
      throw CLIError.usage("--timeline: \(TerminalText.excerpt(path)) is a directory")
    }
    let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
    guard InputFile.isDirectory(folder) else {
      throw CLIError.usage(
        "--timeline: the folder of \(TerminalText.excerpt(path)) does not exist")
    }
  }

  /// Writes the page of `timeline` to `path`, replacing what was there at once (the page is
  /// written beside it, then moved over it).
  static func write(
    _ timeline: Timeline, events: Int, title: String, to path: String
  ) throws(CLIError) {
    let page = TimelinePage.html(timeline, title: title, eventCount: events)
    do {
      try Data(page.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    } catch {
      throw CLIError.storage(
        "\(TerminalText.excerpt(path)): cannot write the timeline (\(error.localizedDescription))")
    }
  }
}
