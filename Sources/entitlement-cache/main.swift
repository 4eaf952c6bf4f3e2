import EntitlementCacheCLI

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// The tool is the EntitlementCacheCLI library, so the fuzz targets can link its parsers. The
// arguments go to it as the bytes the process was given, not as CommandLine.arguments, which
// has already replaced invalid UTF-8 with U+FFFD.
var arguments: [[UInt8]] = []
// A stride, not a range: an exec with no arguments at all has argc 0.
for index in stride(from: 1, to: Int(CommandLine.argc), by: 1) {
  guard let argument = CommandLine.unsafeArgv[index] else { continue }
  arguments.append(
    Array(UnsafeBufferPointer(start: argument, count: strlen(argument))).map {
      UInt8(bitPattern: $0)
    })
}
exit(runTool(arguments: arguments).rawValue)
