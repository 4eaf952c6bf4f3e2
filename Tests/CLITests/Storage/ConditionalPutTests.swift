import Foundation
import TestSupport
import Testing

/// `put` stores through the conditional store the refresh client uses: never an older answer
/// over a newer one, decided inside the write, so two processes cannot race one past it.
@Suite struct ConditionalPutTests {
  let workspace: Workspace

  init() throws {
    workspace = try Workspace()
  }

  @Test func anOlderSnapshotIsDiscardedUnlessForced() throws {
    try workspace.put(
      SampleSnapshot.single(requestDate: "2026-11-30T12:00:00Z"), now: "2026-11-30T12:00:00Z")
    let before = try workspace.logicalState()
    let older = SampleSnapshot.single(requestDate: "2026-11-30T11:00:00Z")
    let now = ["--now", "2026-11-30T12:05:00Z"]
    let refused = try workspace.run("put", Sample.scope() + now, stdin: older)
    #expect(refused.status == 1)
    #expect(refused.stderr.isEmpty)
    #expect(
      refused.stdout.hasSuffix(
        "discarded: older than the stored snapshot (its requestDate is later); nothing changed, "
          + "and --force stores it anyway\n"))
    let json = try workspace.run("put", Sample.scope() + now + ["--json"], stdin: older)
    #expect(try json.json()["outcome"] as? String == "discardedOlder")
    #expect(try workspace.logicalState() == before)

    let forced = try workspace.run("put", Sample.scope() + now + ["--force"], stdin: older)
    #expect(forced.status == 0)
    #expect(forced.stdout.contains("forced        stored without the never-backwards checks"))
    let check = try workspace.check(now: "2026-11-30T12:06:00Z")
    #expect(
      (check.json["evidence"] as? [String: Any])?["verifiedAt"] as? String == "2026-11-30T11:00:00Z"
    )
  }

  @Test func anUnsignedFailedAnswerNeverReplacesAVerifiedOne() throws {
    try workspace.put(
      SampleSnapshot.single(requestDate: "2026-11-30T12:00:00Z"), now: "2026-11-30T12:00:00Z")
    let failed = SampleSnapshot.single(requestDate: "2026-11-30T12:01:00Z", verification: "failed")
    let result = try workspace.run(
      "put", Sample.scope() + ["--now", "2026-11-30T12:01:00Z"], stdin: failed)
    #expect(result.status == 1)
    #expect(
      result.stdout.hasSuffix(
        "refused: it failed verification and the stored snapshot is verified; nothing changed, "
          + "and --force stores it anyway\n"))
  }

  /// Two processes put answers of different ages at the same instant, in both orders of
  /// launch, again and again: the newer one is what remains every time. With an unconditional
  /// put (or a check made before the write), the later writer won, about half the rounds.
  @Test func twoProcessesPuttingAtOnceLeaveTheNewestAnswer() throws {
    let newer = "2026-11-30T12:00:02Z"
    let older = "2026-11-30T12:00:01Z"
    for round in 0..<24 {
      try? FileManager.default.removeItem(atPath: workspace.db)
      try workspace.put(
        SampleSnapshot.single(requestDate: "2026-11-30T12:00:00Z"), now: "2026-11-30T12:00:00Z")
      let dates = round % 2 == 0 ? [older, newer] : [newer, older]
      let processes = try dates.map { date in
        try Self.launchPut(
          SampleSnapshot.single(requestDate: date), db: workspace.db, in: workspace.directory.path)
      }
      let endings = processes.map { $0.finish() }
      #expect(endings.allSatisfy { !$0.signaled && [0, 1].contains($0.status) })
      let check = try workspace.check(now: "2026-11-30T12:00:03Z")
      let verifiedAt = (check.json["evidence"] as? [String: Any])?["verifiedAt"] as? String
      #expect(verifiedAt == newer, "round \(round): \(dates) left \(verifiedAt ?? "nothing")")
    }
  }

  /// Starts `put` of `snapshot` and returns without waiting for it.
  private static func launchPut(_ snapshot: String, db: String, in directory: String) throws
    -> ChildProcess
  {
    try ChildProcess(
      [CLI.binary, "put", "--db", db, "--now", "2026-11-30T12:00:02Z"] + Sample.scope(),
      in: directory, environment: ProcessInfo.processInfo.environment,
      stdin: Data(snapshot.utf8), stdout: .discard, stderr: .discard)
  }
}
