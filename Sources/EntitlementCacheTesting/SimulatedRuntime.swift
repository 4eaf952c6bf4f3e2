import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A `ClientRuntime` in virtual time: the refresh client's tasks run one at a time on an
/// executor the caller drains, and its waits end only when the caller moves the clock. A run is
/// the same every time, and a test scripts each interleaving by hand without sleeping.
///
/// ```swift
/// let runtime = SimulatedRuntime(start: date, bootSession: "boot-1")
/// let cache = inMemoryCustomerInfoCache(clock: runtime.clock)
/// let client = try EntitlementClient(cache: cache, fetcher: fetcher, identity: alice, runtime: runtime)
/// client.start()
/// runtime.runUntilIdle()          // every task has run as far as it can
/// runtime.advance(by: .seconds(3))  // timers due within 3 s fire in order, each drained
/// ```
///
/// Work for the simulation runs only when ``runUntilIdle()`` or ``advance(by:)`` drains it,
/// on the caller's thread. Start tasks the test itself awaits with ``spawn(_:)`` so they run
/// here too.
///
/// Needs task executors (iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2): without an
/// executor preference the client's tasks would run on the global concurrent executor, in no
/// order a test could script.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
public final class SimulatedRuntime: ClientRuntime, Sendable {
  private struct Sleeper {
    let deadline: Duration
    let order: UInt64
    let continuation: CheckedContinuation<Void, any Error>
  }

  private struct Timeline {
    /// Virtual time elapsed since the start: it only moves forward.
    var elapsed: Duration = .zero
    var sleepers: [UInt64: Sleeper] = [:]
    var lastOrder: UInt64 = 0
    var random: UInt64
  }

  /// The virtual wall and boot clocks: set them back or reboot to test the time model. Time
  /// passing on them (``ManualClock/advance(by:)``) is this runtime's ``advance(by:)``.
  public let manualClock: ManualClock
  private let timeline: Locked<Timeline>
  private let jobs = JobQueue()

  /// A runtime at `start`, with a boot clock in `bootSession` when given, drawing random
  /// numbers from a generator seeded with `seed`.
  public init(start: Date, bootSession: String? = nil, seed: UInt64 = 0x5EED) {
    manualClock = ManualClock(start, bootSession: bootSession)
    timeline = Locked(Timeline(random: seed))
    // Time passing on the clock is this runtime's advance, so no wait is stepped over.
    manualClock.owner.withLock { $0 = { [weak self] duration in self?.advance(by: duration) } }
  }

  /// The virtual clocks, to give the cache: the client reads the time from its cache.
  public var clock: CacheClock { manualClock.cacheClock }

  /// The executor every client task runs on.
  public var taskExecutor: (any TaskExecutor)? { jobs }

  /// Virtual time since the start.
  public var elapsed: Duration { timeline.withLock { $0.elapsed } }

  /// The next value of a SplitMix64 generator: the same sequence for the same seed.
  public func nextRandom() -> UInt64 {
    timeline.withLock { timeline in
      timeline.random &+= 0x9E37_79B9_7F4A_7C15
      var z = timeline.random
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
  }

  /// Suspends until virtual time reaches now plus `duration`.
  public func sleep(for duration: Duration) async throws {
    let order = timeline.withLock { timeline in
      timeline.lastOrder += 1
      return timeline.lastOrder
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        let cancelledAlready = timeline.withLock { timeline in
          if Task.isCancelled { return true }
          timeline.sleepers[order] = Sleeper(
            deadline: timeline.elapsed + max(duration, .zero), order: order,
            continuation: continuation)
          return false
        }
        if cancelledAlready { continuation.resume(throwing: CancellationError()) }
      }
    } onCancel: {
      let sleeper = timeline.withLock { $0.sleepers.removeValue(forKey: order) }
      sleeper?.continuation.resume(throwing: CancellationError())
    }
  }

  /// Starts `body` on the simulation's executor; it runs when the simulation is drained.
  @discardableResult
  public func spawn<Result: Sendable>(
    _ body: @escaping @Sendable () async -> Result
  ) -> Task<Result, Never> {
    Task(executorPreference: jobs) { await body() }
  }

  /// Runs every task until each waits on the virtual clock or on something outside the
  /// simulation.
  ///
  /// Waits already due (a zero-length one, such as a timeout of zero) end here too, since no
  /// time needs to pass for them.
  public func runUntilIdle() {
    jobs.drain()
    while let due = nextSleeper(dueBy: elapsed) {
      due.continuation.resume()
      jobs.drain()
    }
  }

  /// Moves virtual time forward by `duration`: every wait due by then ends in the order of
  /// its deadline (the earlier-started first on a tie), the clocks showing its deadline, and
  /// the tasks run after each until idle.
  public func advance(by duration: Duration) {
    let target = timeline.withLock { $0.elapsed } + max(duration, .zero)
    runUntilIdle()
    while let due = nextSleeper(dueBy: target) {
      due.continuation.resume()
      runUntilIdle()
    }
    move(to: target)
    runUntilIdle()
  }

  /// The waits not yet due, as offsets from now, soonest first.
  public var pendingWaits: [Duration] {
    timeline.withLock { timeline in
      timeline.sleepers.values.map { $0.deadline - timeline.elapsed }.sorted()
    }
  }

  private func nextSleeper(dueBy target: Duration) -> Sleeper? {
    let due: Sleeper? = timeline.withLock { timeline in
      guard
        let next = timeline.sleepers.values.min(by: {
          ($0.deadline, $0.order) < ($1.deadline, $1.order)
        }), next.deadline <= target
      else { return nil }
      timeline.sleepers[next.order] = nil
      return next
    }
    if let due { move(to: due.deadline) }
    return due
  }

  private func move(to deadline: Duration) {
    // Never backwards: a wait registered from outside the simulation's executor may carry a
    // deadline from an earlier moment.
    let step = timeline.withLock { timeline in
      let step = deadline - timeline.elapsed
      timeline.elapsed = max(deadline, timeline.elapsed)
      return step
    }
    if step > .zero { manualClock.move(by: step.timeInterval) }
  }
}

extension Duration {
  var timeInterval: TimeInterval {
    let (seconds, attoseconds) = components
    return Double(seconds) + Double(attoseconds) / 1e18
  }
}

/// A first-in, first-out queue of jobs that runs only when drained, on the draining thread.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class JobQueue: TaskExecutor, Sendable {
  private let pending = Locked<[UnownedJob]>([])

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    pending.withLock { $0.append(job) }
  }

  func drain() {
    while let job = pending.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
      job.runSynchronously(on: asUnownedTaskExecutor())
    }
  }
}
