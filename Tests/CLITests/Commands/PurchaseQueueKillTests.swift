import EntitlementCache
import Foundation
import TestSupport
import Testing

/// kill -9 of `entitlement-cache simulate` in the middle of its purchase-queue writes, many
/// times over one kept file (issue 12): after each kill the file opens again with every entry
/// it ever held, none twice, each still bound to the user who observed it first, and nothing
/// moving backwards; then one run with a server that syncs everything leaves nothing unsent.
///
/// `KILL_RUNS` sets the number of runs (default 60, so the suite stays fast); `KILL_SEED`
/// replays a failed session's scripts and kill delays. Where a kill lands inside the process
/// still depends on the machine, so a replay repeats the pressure, not the exact instant.
@Suite(.enabled(if: CLI.simulates)) struct PurchaseQueueKillTests {
  let directory: TemporaryDirectory

  init() throws {
    directory = try TemporaryDirectory()
  }

  @Test func killedMidEnqueueOrDrainLosesNothingDuplicatesNothingAndRebindsNothing() throws {
    let environment = ProcessInfo.processInfo.environment
    let runs = max(2, environment["KILL_RUNS"].flatMap(Int.init) ?? 60)
    let seed = environment["KILL_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
    // A kill lands with an entry `posting` about once in 30 (a few microseconds of each run),
    // so 60 runs miss it about one session in seven. A short session goes on, up to three
    // times its length, until kills have covered it; the file is sized for that many runs.
    let mostRuns = runs < 200 ? runs * 3 : runs
    var session = try KillSession(directory: directory, runs: mostRuns, seed: seed)
    // The cap deletes the oldest final entries beyond it on open: a legitimate loss this
    // test would report as a lost entry, so a session never introduces more than it keeps.
    try #require(
      mostRuns * session.newPerRun <= CacheConfiguration().maxFinalPurchases,
      "KILL_RUNS=\(runs) would introduce more transactions than the final-entry cap keeps")

    // Run 0 is never killed: it creates the file, and its length is the first kill window.
    var window = try session.run(0, killAfter: nil).seconds
    var made = runs
    for index in 1..<mostRuns {
      guard session.problems.isEmpty else { break }
      let covered = session.killsLeavingPosting > 0 && session.killsAmongEnqueues > 0
      if index >= runs, covered || runs < 30 {
        made = index
        break
      }
      made = index + 1
      let delay = Double(session.rng.next() % 1_000_001) / 1_000_000 * window
      let outcome = try session.run(index, killAfter: delay)
      // Runs grow with the file, so the window follows them: wider after each kill, narrower
      // after a run that ended first. It settles where about one run in six ends, just past
      // a run's length, so kills land anywhere from launch to exit.
      window *= outcome.killed ? 1.05 : 0.8
    }
    if session.problems.isEmpty { try session.finalRun(index: made) }

    let summary = session.summary + String(format: ", kill window %.0f ms", window * 1000)
    for problem in session.problems.prefix(20) {
      Issue.record("\(problem) [\(summary)]")
    }
    if session.problems.count > 20 {
      Issue.record("\(session.problems.count - 20) more problems [\(summary)]")
    }
    // Most runs must end in a kill, and kills must have left entries posting and cut runs off
    // among their enqueues, or the test only replays scripts. A session cut short by a
    // problem has already failed.
    guard session.problems.isEmpty else { return }
    #expect(session.kills * 2 > made - 1, "too few runs were killed [\(summary)]")
    if runs >= 30 {
      #expect(session.killsLeavingPosting > 0, "no kill left an entry posting [\(summary)]")
      #expect(session.killsAmongEnqueues > 0, "no kill landed among enqueues [\(summary)]")
    }
  }
}
