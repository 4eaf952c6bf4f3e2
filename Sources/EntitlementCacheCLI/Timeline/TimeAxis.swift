/// The horizontal scale of a timeline: true virtual time onto pixels, linear wherever
/// something happens, with each long quiet stretch drawn short and marked as a break.
///
/// A field report is bursts with hours or days between them: a launch, then a flight, then a
/// landing. Drawn linearly, a minute of launch is a sliver beside an idle hour. So every gap
/// between two instants where something happened that is longer than ``breakFraction`` of the
/// run, and several times the run's typical gap (``breakMultiple`` times the median), is drawn a
/// few pixels wide, with its true length written on the axis, and the rest is to scale. A run
/// that is busy throughout (a year of daily refreshes), or paced evenly (a check every two
/// seconds), has no break at all: drawing each of its gaps short would leave no time to scale,
/// and no tick to read it by.
struct TimeAxis {
  let start: Int64
  let end: Int64
  let left: Double
  let width: Double
  /// Instants and where they are drawn, increasing; between two, the scale is linear.
  private(set) var knots: [(at: Int64, x: Double)] = []
  /// The stretches drawn short, as (from, to) instants.
  private(set) var breaks: [(from: Int64, to: Int64)] = []

  /// How long a quiet stretch may be, as a fraction of the run, before it is drawn short.
  static let breakFraction = 0.06
  /// How many times the median gap between instants a quiet stretch must be to be drawn short.
  static let breakMultiple: Int64 = 4

  /// - Parameter instants: Where something happens: band boundaries and marks.
  init(start: Int64, end: Int64, instants: [Int64], left: Double, width: Double) {
    self.start = start
    // A run of one instant still spans a second, so its marks have room.
    self.end = max(end, start + 1_000)
    self.left = left
    self.width = width
    let points = Array(Set(instants.filter { $0 > start && $0 < self.end })).sorted()
    let gaps = zip([start] + points, points + [self.end]).map { $1 - $0 }.sorted()
    // The lower median: with half the gaps long (a burst, hours, a burst), the short ones set
    // the pace, and the long ones are still drawn short.
    let median = gaps.isEmpty ? 0 : gaps[(gaps.count - 1) / 2]
    let cap = max(
      Int64(Double(self.end - start) * Self.breakFraction), 1_000,
      min(median, Int64.max / Self.breakMultiple) * Self.breakMultiple)
    var previous = start
    for point in points + [self.end] {
      if point - previous > cap { breaks.append((previous, point)) }
      previous = point
    }
    // Each break takes the same few pixels, the time between them the rest, to scale.
    let breakWidth = breaks.isEmpty ? 0 : min(width * 0.06, width * 0.4 / Double(breaks.count))
    let quiet = breaks.reduce(Int64(0)) { $0 + ($1.to - $1.from) }
    let busy = Double(max(self.end - start - quiet, 1))
    let perMillisecond = (width - breakWidth * Double(breaks.count)) / busy
    var x = left
    var at = start
    knots = [(start, left)]
    for gap in breaks {
      x += Double(gap.from - at) * perMillisecond
      knots.append((gap.from, x))
      x += breakWidth
      knots.append((gap.to, x))
      at = gap.to
    }
    knots.append((self.end, left + width))
  }

  /// The x coordinate of `instant`.
  func x(_ instant: Int64) -> Double {
    guard let first = knots.first, let last = knots.last else { return left }
    if instant <= first.at { return first.x }
    if instant >= last.at { return last.x }
    var low = 0
    var high = knots.count - 1
    while high - low > 1 {
      let middle = (low + high) / 2
      if knots[middle].at <= instant { low = middle } else { high = middle }
    }
    let (a, b) = (knots[low], knots[high])
    guard b.at > a.at else { return a.x }
    return a.x + Double(instant - a.at) / Double(b.at - a.at) * (b.x - a.x)
  }

  /// The ticks: in each stretch drawn to scale, instants at a round step (from a second to a
  /// year) that leaves `spacing` pixels for each label; the first of a stretch that follows a
  /// break also says the day.
  func ticks(spacing: Double = 110) -> [(at: Int64, label: String)] {
    var ticks: [(Int64, String)] = []
    var from = start
    for stretch in breaks.map({ ($0.from, $0.to) }) + [(end, end)] {
      let to = stretch.0
      let pixels = x(to) - x(from)
      if to > from, pixels >= 1 {
        ticks += Self.roundTicks(
          from: from, to: to, pixels: pixels, spacing: spacing,
          withDay: from != start)
      }
      from = stretch.1
    }
    return ticks
  }

  private static func roundTicks(
    from: Int64, to: Int64, pixels: Double, spacing: Double, withDay: Bool
  ) -> [(Int64, String)] {
    let most = max(1, Int64(pixels / spacing))
    let span = to - from
    guard let (step, unit) = steps.first(where: { span / $0.0 < most }) ?? steps.last else {
      return []
    }
    let origin = floorTo(from, step >= 86_400_000 ? 86_400_000 : 3_600_000)
    var at = origin + ((from - origin) / step) * step
    if at < from { at += step }
    var ticks: [(Int64, String)] = []
    var day = withDay ? "" : monthDay(from)
    while at <= to {
      let label = text(at, unit)
      // A time of day says its day where the day changes: after a break, or past midnight.
      let today = monthDay(at)
      let dated = unit != .days && today != day && label != today
      ticks.append((at, dated ? today + " " + label : label))
      day = today
      at += step
    }
    return ticks
  }

  /// The round steps ticks take, in milliseconds, and how their labels read.
  private static let steps: [(Int64, Unit)] = [
    (1_000, .seconds), (2_000, .seconds), (5_000, .seconds), (10_000, .seconds),
    (15_000, .seconds), (30_000, .seconds), (60_000, .minutes), (120_000, .minutes),
    (300_000, .minutes), (600_000, .minutes), (900_000, .minutes), (1_800_000, .minutes),
    (3_600_000, .minutes), (7_200_000, .minutes), (10_800_000, .minutes),
    (21_600_000, .minutes), (43_200_000, .minutes), (86_400_000, .days), (172_800_000, .days),
    (604_800_000, .days), (1_209_600_000, .days), (2_592_000_000, .days),
    (5_184_000_000, .days), (7_776_000_000, .days), (15_552_000_000, .days),
    (31_536_000_000, .days),
  ]

  private enum Unit {
    case seconds, minutes, days
  }

  private static func floorTo(_ instant: Int64, _ unit: Int64) -> Int64 {
    let remainder = instant % unit
    return instant - (remainder < 0 ? remainder + unit : remainder)
  }

  /// `Dec 5`, `12:30`, `12:30:15`: what a reader needs at that step, in UTC.
  private static func text(_ instant: Int64, _ unit: Unit) -> String {
    let stamp = Array(SimulationTime.date(instant).iso8601)  // 2026-12-05T12:30:15Z
    guard stamp.count >= 19 else { return String(stamp) }
    switch unit {
    case .seconds: return String(stamp[11..<19])
    case .minutes:
      let hour = String(stamp[11..<16])
      return hour == "00:00" ? monthDay(instant) : hour
    case .days: return monthDay(instant)
    }
  }

  private static let months = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
  ]

  private static func monthDay(_ instant: Int64) -> String {
    let stamp = Array(SimulationTime.date(instant).iso8601)
    guard stamp.count >= 10 else { return String(stamp) }
    let month = Int(String(stamp[5..<7])) ?? 1
    let day = Int(String(stamp[8..<10])) ?? 1
    return "\(months[max(0, min(11, month - 1))]) \(day)"
  }
}
