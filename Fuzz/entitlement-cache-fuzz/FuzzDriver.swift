#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One fuzz target: what it is called on the command line and what it does with one input.
enum FuzzTarget: String, CaseIterable, Sendable {
  case snapshotDecoder = "snapshot-decoder"
  case iso8601
  case cliArguments = "cli-arguments"
  case signatureEnvelope = "signature-envelope"
  case simulateScript = "simulate-script"
  case stateful

  /// Runs the target on one input; a property that fails traps (``require(_:_:)``).
  func run(_ data: Data) {
    switch self {
    case .snapshotDecoder: SnapshotDecoderTarget.run(data)
    case .iso8601: ISO8601Target.run(data)
    case .cliArguments: CLIArgumentsTarget.run(data)
    case .signatureEnvelope: SignatureEnvelopeTarget.run(data)
    case .simulateScript: SimulateScriptTarget.run(data)
    case .stateful: StatefulTarget.run(data)
    }
  }
}

/// A property that must hold: when it does not, the message goes to stderr and the process
/// traps, which libFuzzer records as a crash with the input that caused it.
func require(
  _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
  file: StaticString = #fileID, line: UInt = #line
) {
  if !condition() { fatalError("property failed: \(message())", file: file, line: line) }
}

enum FuzzDriver {
  /// The target libFuzzer's callback runs. Set once, before the driver starts; libFuzzer then
  /// calls back on this thread, one input at a time, so nothing reads it concurrently.
  nonisolated(unsafe) static var selected = FuzzTarget.snapshotDecoder

  /// Writes one line to stderr.
  static func say(_ line: String) {
    let text = Array((line + "\n").utf8)
    _ = text.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
  }

  /// The environment variable that names the target for the processes libFuzzer starts with
  /// `-fork` or `-jobs`: it runs them with its own arguments, without the target's name.
  static let targetVariable = "ENTITLEMENT_CACHE_FUZZ_TARGET"

  /// `entitlement-cache-fuzz TARGET [libFuzzer arguments]`.
  static func run(_ arguments: [String]) -> Int32 {
    let named = arguments.count >= 2 ? FuzzTarget(rawValue: arguments[1]) : nil
    let inherited = getenv(targetVariable).flatMap { FuzzTarget(rawValue: String(cString: $0)) }
    guard let target = named ?? inherited else {
      let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
      say("usage: entitlement-cache-fuzz TARGET [libFuzzer flags] [corpus dirs]; TARGET: \(names)")
      return 2
    }
    selected = target
    setenv(targetVariable, target.rawValue, 1)
    #if ENTITLEMENT_CACHE_FUZZING
      // libFuzzer reads its flags from argv[1...] and names itself by argv[0]. The strings are
      // never freed: libFuzzer keeps pointers into them for the life of the process.
      let forwarded = [arguments[0]] + arguments.dropFirst(named == nil ? 1 : 2)
      var pointers: [UnsafeMutablePointer<CChar>?] = forwarded.map { strdup($0) } + [nil]
      var argc = Int32(forwarded.count)
      return pointers.withUnsafeMutableBufferPointer { buffer in
        var argv = buffer.baseAddress
        return withUnsafeMutablePointer(to: &argv) { argvPointer in
          // libFuzzer may rewrite argc and argv; neither is read again here.
          LLVMFuzzerRunDriver(&argc, argvPointer) { bytes, count in
            let data = bytes.map { Data(bytes: $0, count: count) } ?? Data()
            FuzzDriver.selected.run(data)
            return 0
          }
        }
      }
    #else
      return 2
    #endif
  }
}

#if ENTITLEMENT_CACHE_FUZZING
  /// libFuzzer's entry point for a program with its own main (`-sanitize=fuzzer` links it):
  /// `int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*cb)(const uint8_t *, size_t))`.
  /// Every argument is an integer or a pointer, passed the same way by Swift's and C's
  /// calling conventions.
  @_silgen_name("LLVMFuzzerRunDriver")
  func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
  ) -> Int32
#endif
