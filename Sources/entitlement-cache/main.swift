import EntitlementCacheCLI

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// The tool is the EntitlementCacheCLI library, so the fuzz targets can link its parsers.
exit(runTool().rawValue)
