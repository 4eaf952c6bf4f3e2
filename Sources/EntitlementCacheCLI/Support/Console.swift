#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Output through `write(2)` on the standard descriptors: no Foundation file handles and no
/// C `FILE` globals, which strict concurrency cannot prove safe. The tool starts and exits in
/// milliseconds and writes a few kilobytes.
enum Console {
  /// Writes `text` to stdout, with every character a terminal would act on escaped but the
  /// newlines the tool meant (``TerminalText``): the last guard, whatever a command composed.
  static func out(_ text: String) {
    send(TerminalText.lines(text), to: STDOUT_FILENO)
  }

  /// Writes `error: MESSAGE` to stderr as one line.
  static func error(_ message: String) {
    send("error: \(flattened(message))\n", to: STDERR_FILENO)
  }

  /// Writes `warning: MESSAGE` to stderr as one line.
  static func warning(_ message: String) {
    send("warning: \(flattened(message))\n", to: STDERR_FILENO)
  }

  /// Errors are one line, whatever a lower layer or a quoted value put in the message, and a
  /// terminal acts on nothing in it: a newline shows as `\u{A}`, as it does on stdout, so a
  /// path with a newline never reads as one with a space.
  private static func flattened(_ message: String) -> String {
    TerminalText.field(message)
  }

  private static func send(_ text: String, to descriptor: Int32) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
      let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
      if written < 0, errno == EINTR { continue }
      // A closed pipe or full disk: nothing better to do than stop writing.
      guard written > 0 else { return }
      bytes = bytes.dropFirst(written)
    }
  }
}
