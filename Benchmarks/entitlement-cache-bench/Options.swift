import Foundation

/// The command line: `entitlement-cache-bench [--quick] [--json FILE] [--check-targets]
/// [--cli PATH] [--sqlite3 PATH] [--only NAME]`.
struct Options {
  var quick = false
  var jsonPath: String?
  var checkTargets = false
  var cliPath: String?
  var sqlite3Path = "/usr/bin/sqlite3"
  var only: String?
  var profile: (kind: String, count: Int)?
  var profileScopes = Workload.headlineScopes
  var profileEntitlements = Workload.headlineEntitlements

  static let usage = """
    usage: entitlement-cache-bench [--quick] [--json FILE] [--check-targets] [--cli PATH]
                                   [--sqlite3 PATH] [--only NAME]
                                   [--profile KIND COUNT [--scopes N] [--entitlements N]]
      --quick          fewer samples, same cases (CI)
      --json FILE      write {"cases": [...], "targets": [...]} to FILE
      --check-targets  exit 1 when a target ratio is more than 2x worse than its target
      --cli PATH       the entitlement-cache binary for cold_first_decision
                       (default: entitlement-cache next to this executable)
      --sqlite3 PATH   the sqlite3 shell for baseline_sqlite3_cli (default /usr/bin/sqlite3)
      --only NAME      run only cases whose name contains NAME
      --profile KIND COUNT
                       run COUNT operations of one loop and nothing else, for callgrind;
                       KIND is hot, read-through, evaluated, client, client-start,
                       baseline, raw-point-read, enqueue, raw-enqueue, raw-enqueue-lookup,
                       verified-read-through, ed25519-verify or signed-write
      --scopes N       how many scopes --profile uses (default 100)
      --entitlements N how many entitlements each of its snapshots holds (default 10)
    """

  init(arguments: [String]) throws {
    var remaining = arguments[...]
    func value(_ flag: String) throws -> String {
      guard let value = remaining.popFirst() else {
        throw BenchError.usage("\(flag) needs a value")
      }
      return value
    }
    while let argument = remaining.popFirst() {
      switch argument {
      case "--quick": quick = true
      case "--json": jsonPath = try value(argument)
      case "--check-targets": checkTargets = true
      case "--cli": cliPath = try value(argument)
      case "--sqlite3": sqlite3Path = try value(argument)
      case "--only": only = try value(argument)
      case "--scopes":
        guard let scopes = Int(try value(argument)), scopes > 0 else {
          throw BenchError.usage("--scopes needs a positive count")
        }
        profileScopes = scopes
      case "--entitlements":
        guard let entitlements = Int(try value(argument)), entitlements > 0 else {
          throw BenchError.usage("--entitlements needs a positive count")
        }
        profileEntitlements = entitlements
      case "--profile":
        let kind = try value(argument)
        guard let count = Int(try value(argument)) else {
          throw BenchError.usage("--profile \(Profile.kinds) COUNT")
        }
        profile = (kind, count)
      case "-h", "--help":
        print(Options.usage)
        exit(0)
      default: throw BenchError.usage("unknown argument \(argument)\n\(Options.usage)")
      }
    }
  }

  /// The CLI binary: the one given, or the sibling of this executable (both products land in
  /// the same build directory).
  var resolvedCLIPath: String? {
    if let cliPath { return cliPath }
    guard let bench = Bundle.main.executableURL else { return nil }
    return bench.deletingLastPathComponent().appending(path: "entitlement-cache").path
  }

  func includes(_ name: String) -> Bool {
    only.map { name.contains($0) } ?? true
  }
}
