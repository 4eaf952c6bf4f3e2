import EntitlementCache
import TestSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// How many samples a case takes and how long each batch runs.
struct SamplingPlan {
  /// Timed batches per case; the median and p99 are taken over these.
  var samples: Int
  /// Untimed batches first, so caches, branch predictors and the allocator settle.
  var warmupBatches: Int
  /// The batch size is chosen so one batch lasts about this long: long enough that the two
  /// clock reads around it vanish, short enough that a preemption spoils one sample, not many.
  var batchNanoseconds: Double

  static let full = SamplingPlan(samples: 2_000, warmupBatches: 200, batchNanoseconds: 20_000)
  static let quick = SamplingPlan(samples: 1_000, warmupBatches: 100, batchNanoseconds: 20_000)
}

/// The monotonic clock the harness times batches with (never the cache's injected clock).
enum Stopwatch {
  static func nanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
  }
}

/// Keeps results alive so the optimizer cannot delete the work that produced them, and counts
/// how many operations answered "granted", which every case checks.
struct Sink {
  private(set) var granted = 0
  private(set) var operations = 0

  @inline(never)
  mutating func consume(granted isGranted: Bool) {
    operations &+= 1
    if isGranted { granted &+= 1 }
  }
}

/// The seeded sequence of scope indexes every case walks, one per operation, so each case and
/// its baseline visit the same scopes in the same order.
struct ScopeSequence {
  private let indexes: [Int]
  private var position = 0

  /// A fixed pseudo-random sequence over `0..<count` (SplitMix64, seeded).
  static let defaultLength = 1 << 16

  init(count: Int, seed: UInt64 = 0x5EED_CAFE_F00D_BEEF, length: Int = defaultLength) {
    var random = SplitMix64(seed: seed)
    var indexes: [Int] = []
    indexes.reserveCapacity(length)
    for _ in 0..<length {
      indexes.append(Int(random.next() % UInt64(count)))
    }
    self.indexes = indexes
  }

  /// The next scope index; the sequence repeats after `length` operations.
  @inline(__always)
  mutating func next() -> Int {
    let index = indexes[position]
    position = (position &+ 1) & (indexes.count &- 1)
    return index
  }
}

/// The elements a case visits, one per operation, stored in the seeded order, so walking them
/// reads memory sequentially: the benchmark's own lookup of "which scope next" then costs the
/// same with 1 scope as with 100,000, and only the code under test touches scattered memory.
struct SeededStream<Element> {
  private let ordered: [Element]
  private var position = 0

  init(_ elements: [Element]) {
    var sequence = ScopeSequence(count: elements.count)
    ordered = (0..<ScopeSequence.defaultLength).map { _ in elements[sequence.next()] }
  }

  @inline(__always)
  mutating func next() -> Element {
    let element = ordered[position]
    position = (position &+ 1) & (ordered.count &- 1)
    return element
  }
}

/// One case set up and ready to time: a batch of its operations, and what turns its timings
/// into a result (checking every operation's answer) once they are taken.
struct TimedCase {
  var name: String
  /// Timed batches; nil for the plan's default.
  var samples: Int?
  var batch: (Int) -> Void
  var result: (Measurement) throws -> CaseResult
  /// Untimed batches first; nil for the plan's. A case whose one operation takes a tenth of a
  /// second needs a few, not a hundred.
  var warmupBatches: Int? = nil
}

/// Times batches of operations and reduces them to nanoseconds per operation.
struct Harness {
  let plan: SamplingPlan

  /// Times `timed` alone.
  func run(_ timed: TimedCase) throws -> CaseResult {
    try timed.result(
      measure(samples: timed.samples, warmupBatches: timed.warmupBatches, timed.batch))
  }

  /// Times cases that are compared with each other in alternation: one batch of each per
  /// sample, starting with a different case each sample, so a change in the machine's load
  /// during the run lands on all of them and the ratios between them hold. Run one after the
  /// other, a busy second on a shared machine moved a ratio by half.
  func run(together cases: [TimedCase]) throws -> [CaseResult] {
    guard Set(cases.map { $0.samples ?? plan.samples }).count <= 1 else {
      throw BenchError.usage("cases timed together must take the same number of samples")
    }
    let samples = cases.first?.samples ?? plan.samples
    let sizes = cases.map { batchSize(for: $0.batch) }
    for _ in 0..<plan.warmupBatches {
      for (timed, size) in zip(cases, sizes) { timed.batch(size) }
    }
    var times = Array(repeating: [Double](), count: cases.count)
    for index in times.indices { times[index].reserveCapacity(samples) }
    for sample in 0..<samples {
      for step in cases.indices {
        let index = (sample + step) % cases.count
        times[index].append(Self.time(sizes[index], cases[index].batch) / Double(sizes[index]))
      }
    }
    let alternation = Self.alternations.withLock { count in
      count += 1
      return count
    }
    return try cases.indices.map { index in
      var result = try cases[index].result(
        Measurement(perOperation: times[index], batchSize: sizes[index]))
      result.rounds = times[index]
      result.alternation = alternation
      return result
    }
  }

  /// Numbers each ``run(together:)``, so a target knows which cases took their samples in the
  /// same rounds.
  private static let alternations = Locked(0)

  /// Runs `batch(count)` (which performs `count` operations) until it has `samples` timed
  /// batches (the plan's by default), and returns nanoseconds per operation for each.
  func measure(
    samples: Int? = nil, warmupBatches: Int? = nil, _ batch: (Int) -> Void
  ) -> Measurement {
    let samples = samples ?? plan.samples
    let batchSize = batchSize(for: batch)
    for _ in 0..<(warmupBatches ?? plan.warmupBatches) { batch(batchSize) }
    var perOperation: [Double] = []
    perOperation.reserveCapacity(samples)
    for _ in 0..<samples {
      perOperation.append(Self.time(batchSize, batch) / Double(batchSize))
    }
    return Measurement(perOperation: perOperation, batchSize: batchSize)
  }

  /// How many operations make one batch last about ``SamplingPlan/batchNanoseconds``.
  ///
  /// Grows the batch until it lasts a measurable time, then sizes it from the fastest of a
  /// few repeats, so one preempted batch cannot shrink every later one.
  private func batchSize(for batch: (Int) -> Void, maxBatch: Int = 1 << 20) -> Int {
    var batchSize = 1
    while batchSize < maxBatch {
      if Self.time(batchSize, batch) >= plan.batchNanoseconds / 4 { break }
      batchSize *= 2
    }
    let fastest = (0..<5).map { _ in Self.time(batchSize, batch) }.min() ?? 1
    let estimate = max(fastest, 1) / Double(batchSize)
    return max(1, min(maxBatch, Int(plan.batchNanoseconds / estimate)))
  }

  private static func time(_ count: Int, _ batch: (Int) -> Void) -> Double {
    let start = Stopwatch.nanoseconds()
    batch(count)
    return Double(Stopwatch.nanoseconds() - start)
  }
}

/// Nanoseconds per operation, one value per sample.
struct Measurement {
  var perOperation: [Double]
  var batchSize: Int

  var median: Double { Self.quantile(perOperation, 0.50) }
  var p99: Double { Self.quantile(perOperation, 0.99) }

  /// Nearest-rank quantile: a value that was actually observed.
  static func quantile(_ values: [Double], _ q: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let rank = Int((q * Double(sorted.count)).rounded(.up))
    return sorted[min(sorted.count - 1, max(0, rank - 1))]
  }
}
