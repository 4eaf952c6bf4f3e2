import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

@Suite("SimulatedRuntime: virtual time that only moves when told")
struct SimulatedRuntimeTests {
  static let start = Fixture.requestDate

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "waits end in deadline order, the earlier-started first on a tie, the clock at each deadline")
  func deadlineOrder() {
    let runtime = SimulatedRuntime(start: Self.start, bootSession: "boot")
    let log = Locked<[String]>([])
    for (name, seconds) in [("c", 3), ("a", 1), ("b1", 2), ("b2", 2)] {
      runtime.spawn {
        try? await runtime.sleep(for: .seconds(seconds))
        let at = runtime.manualClock.now.timeIntervalSince(Self.start)
        log.withLock { $0.append("\(name)@\(at)") }
      }
    }
    runtime.runUntilIdle()
    #expect(runtime.pendingWaits == [.seconds(1), .seconds(2), .seconds(2), .seconds(3)])
    runtime.advance(by: .milliseconds(2500))
    #expect(log.withLock { $0 } == ["a@1.0", "b1@2.0", "b2@2.0"])
    #expect(runtime.elapsed == .milliseconds(2500))
    #expect(runtime.manualClock.bootInstant?.sinceBoot == 2.5)
    runtime.advance(by: .seconds(10))
    #expect(log.withLock { $0 } == ["a@1.0", "b1@2.0", "b2@2.0", "c@3.0"])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("time passing on the runtime's clock is the runtime's advance: every wait due ends")
  func advancingTheClockFiresWaits() {
    let runtime = SimulatedRuntime(start: Self.start, bootSession: "boot")
    let log = Locked<[String]>([])
    runtime.spawn {
      try? await runtime.sleep(for: .seconds(2))
      let at = runtime.manualClock.now.timeIntervalSince(Self.start)
      log.withLock { $0.append("woke@\(at)") }
    }
    runtime.runUntilIdle()
    runtime.manualClock.advance(by: .seconds(5))
    #expect(log.withLock { $0 } == ["woke@2.0"])
    #expect(runtime.elapsed == .seconds(5))
    #expect(runtime.manualClock.now == Self.start.addingTimeInterval(5))
    // Set back, the wall clock moves alone: no virtual time passes.
    runtime.manualClock.advance(by: .minute * -1)
    #expect(runtime.elapsed == .seconds(5))
    #expect(runtime.manualClock.bootInstant?.sinceBoot == 5)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a wait started while an earlier one ends is run in the same advance when it is due")
  func waitsStartedDuringAnAdvance() {
    let runtime = SimulatedRuntime(start: Self.start)
    let log = Locked<[Double]>([])
    runtime.spawn {
      for _ in 0..<3 {
        try? await runtime.sleep(for: .seconds(1))
        log.withLock { $0.append(runtime.elapsed.seconds) }
      }
    }
    runtime.advance(by: .seconds(3))
    #expect(log.withLock { $0 } == [1, 2, 3])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a cancelled wait throws CancellationError and leaves nothing pending")
  func cancellation() {
    let runtime = SimulatedRuntime(start: Self.start)
    let outcome = Locked<String?>(nil)
    let task = runtime.spawn {
      do {
        try await runtime.sleep(for: .minute)
        outcome.withLock { $0 = "woke" }
      } catch {
        outcome.withLock { $0 = "\(type(of: error))" }
      }
    }
    runtime.runUntilIdle()
    #expect(runtime.pendingWaits == [.minute])
    task.cancel()
    runtime.runUntilIdle()
    #expect(outcome.withLock { $0 } == "CancellationError")
    #expect(runtime.pendingWaits.isEmpty)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("the same seed gives the same random numbers; another seed others")
  func seededRandom() {
    let one = SimulatedRuntime(start: Self.start, seed: 7)
    let same = SimulatedRuntime(start: Self.start, seed: 7)
    let other = SimulatedRuntime(start: Self.start, seed: 8)
    let first = (0..<4).map { _ in one.nextRandom() }
    #expect(first == (0..<4).map { _ in same.nextRandom() })
    #expect(first != (0..<4).map { _ in other.nextRandom() })
    #expect(Set(first).count == 4)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a zero-length wait ends when the simulation is drained, with no time passing")
  func zeroLengthWait() {
    let runtime = SimulatedRuntime(start: Self.start)
    let woke = Locked(false)
    runtime.spawn {
      try? await runtime.sleep(for: .zero)
      woke.withLock { $0 = true }
    }
    runtime.runUntilIdle()
    #expect(woke.withLock { $0 })
    #expect(runtime.elapsed == .zero)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("nothing runs until the simulation is drained")
  func onlyWhenDrained() {
    let runtime = SimulatedRuntime(start: Self.start)
    let ran = Locked(false)
    runtime.spawn { ran.withLock { $0 = true } }
    #expect(!ran.withLock { $0 })
    runtime.runUntilIdle()
    #expect(ran.withLock { $0 })
  }
}
