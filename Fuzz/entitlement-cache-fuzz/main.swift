#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// `entitlement-cache-fuzz TARGET [libFuzzer flags] [corpus dirs]`: the first argument picks the
// target, the rest go to libFuzzer. SwiftPM links executables with `--defsym main=…`, which
// takes the place of libFuzzer's own main, so the driver is started from here.
#if ENTITLEMENT_CACHE_FUZZING
  exit(FuzzDriver.run(CommandLine.arguments))
#else
  // A normal build (swift build, swift test) compiles every target but has no libFuzzer.
  FuzzDriver.say("entitlement-cache-fuzz: build with scripts/fuzz.sh")
  exit(2)
#endif
