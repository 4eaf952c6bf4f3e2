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

/// Reads a snapshot's bytes from a file or stdin with plain POSIX calls.
enum InputFile {
  /// Reads all of `path`, or stdin when `path` is nil or `-`.
  static func contents(of path: String?) throws(CLIError) -> Data {
    guard let path, path != "-" else {
      // A terminal on stdin means the user forgot the input; waiting would look like a hang.
      guard isatty(STDIN_FILENO) == 0 else {
        throw CLIError.usage("no snapshot: pass --file F or pipe the JSON on stdin")
      }
      return try readAll(STDIN_FILENO, name: "stdin")
    }
    try checkLength(of: path, named: "the file path")
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
      let reason = errno == ENOENT ? "no such file" : String(cString: strerror(errno))
      throw CLIError.usage("\(path): \(reason)")
    }
    defer { close(descriptor) }
    return try readAll(descriptor, name: path)
  }

  /// The system's limit on a path, its terminating NUL included: a longer path is refused
  /// with a one-line error that quotes only its start, never opened and reported as missing.
  static let pathLimit = Int(PATH_MAX)

  /// Refuses a path of ``pathLimit`` bytes or more, naming where it came from.
  static func checkLength(of path: String, named source: String) throws(CLIError) {
    guard path.utf8.count >= pathLimit else { return }
    throw CLIError.usage(
      "\(source): a path of \(path.utf8.count) bytes; the system takes fewer than "
        + "\(pathLimit): '\(TerminalText.excerpt(path))'")
  }

  /// Whether something exists at `path`.
  static func exists(_ path: String) -> Bool {
    var status = stat()
    return lstat(path, &status) == 0
  }

  /// What is at `path`, following symbolic links, when it is there and is neither a regular
  /// file nor a directory: `a FIFO`, `a character device`, `a block device`, `a socket`.
  static func nonRegularKind(_ path: String) -> String? {
    var status = stat()
    guard stat(path, &status) == 0 else { return nil }
    switch status.st_mode & S_IFMT {
    case S_IFREG, S_IFDIR: return nil
    case S_IFIFO: return "a FIFO"
    case S_IFCHR: return "a character device"
    case S_IFBLK: return "a block device"
    case S_IFSOCK: return "a socket"
    default: return "something other than a file"
    }
  }

  /// Whether `path` is a directory, or a symbolic link to one.
  static func isDirectory(_ path: String) -> Bool {
    var status = stat()
    return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
  }

  /// Far above the library's snapshot size cap, which reports the exact size; this only
  /// keeps a runaway pipe from filling memory.
  static let readLimit = 64 << 20

  private static func readAll(_ descriptor: Int32, name: String) throws(CLIError) -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count == 0 { return data }
      if count < 0 {
        if errno == EINTR { continue }
        throw CLIError.usage("\(name): \(String(cString: strerror(errno)))")
      }
      data.append(contentsOf: buffer[..<count])
      guard data.count <= readLimit else {
        throw CLIError.usage(
          "\(name): larger than \(readLimit >> 20) MiB, more than any input the tool reads")
      }
    }
  }
}
