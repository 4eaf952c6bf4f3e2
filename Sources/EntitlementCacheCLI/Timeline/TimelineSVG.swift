/// Draws a ``Timeline`` as inline SVG: the time axis, then one row per lane, bands and markers
/// placed by their instants. Every element carries the instants it stands for (`data-start`,
/// `data-end`, `data-at`) as the JSON output writes them, and its hover text in a `<title>`.
///
/// It stays legible from one event to thousands: a run of bands each narrower than
/// ``minimumBandWidth`` is drawn as one band of its changes, and markers closer than
/// ``clusterDistance`` as one mark with their count, so the drawing has at most a few elements
/// per pixel of width, whatever the run.
struct TimelineSVG {
  let timeline: Timeline
  /// How many times wider than the finest a band must be to stand alone, and marks apart to
  /// be drawn apart: 1, unless a run is so large that its page would not fit.
  var coarseness = 1.0
  /// The width of the whole picture, in CSS pixels.
  var width = 1_280.0

  static let gutter = 150.0
  static let axisHeight = 44.0
  static let bandLaneHeight = 30.0
  static let markerLaneHeight = 26.0
  static let minimumBandWidth = 1.5
  static let clusterDistance = 16.0

  var axis: TimeAxis {
    var instants: [Int64] = []
    for lane in timeline.lanes {
      for band in lane.bands { instants += [band.start, band.end] }
      for marker in lane.markers { instants.append(marker.at) }
    }
    return TimeAxis(
      start: timeline.start, end: timeline.end, instants: instants, left: Self.gutter,
      width: width - Self.gutter - 24)
  }

  var height: Double {
    Self.axisHeight + timeline.lanes.reduce(0) { $0 + laneHeight($1) + 6 } + 12
  }

  private func laneHeight(_ lane: Timeline.Lane) -> Double {
    lane.bands.isEmpty ? Self.markerLaneHeight : Self.bandLaneHeight
  }

  func render() -> String {
    let axis = self.axis
    var svg = """
      <svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="\(Self.number(width))" \
      height="\(Self.number(height))" viewBox="0 0 \(Self.number(width)) \(Self.number(height))" \
      role="img" aria-label="timeline of the run" data-start="\(Self.iso(timeline.start))" \
      data-end="\(Self.iso(timeline.end))">
      \(TimelinePatterns.definitions)
      """
    svg += drawAxis(axis)
    var y = Self.axisHeight
    for lane in timeline.lanes {
      let height = laneHeight(lane)
      svg += "<g class=\"lane lane-\(lane.kind.rawValue)\" data-lane=\"\(Self.xml(lane.title))\">"
      svg +=
        "<rect class=\"lane-ground\" x=\"\(Self.number(Self.gutter))\" y=\"\(Self.number(y))\" "
      svg += "width=\"\(Self.number(axis.width))\" height=\"\(Self.number(height))\"/>"
      svg += "<text class=\"lane-title\" x=\"8\" y=\"\(Self.number(y + height / 2 + 4))\">"
      svg += "\(Self.xml(Self.shortened(lane.title, to: 17)))</text>"
      // A lane with marks may have one where a band starts: its labels begin past it.
      svg += drawBands(
        lane.bands, axis: axis, y: y, height: height, labelInset: lane.markers.isEmpty ? 4 : 12)
      svg += drawMarkers(lane.markers, axis: axis, y: y, height: height)
      svg += "</g>\n"
      y += height + 6
    }
    return svg + "</svg>\n"
  }

  // MARK: Axis

  private func drawAxis(_ axis: TimeAxis) -> String {
    var svg = "<g class=\"axis\">"
    let bottom = height - 10
    // A quiet stretch drawn short: shaded across the lanes, with its true length.
    for gap in axis.breaks {
      let from = axis.x(gap.from)
      let to = axis.x(gap.to)
      let seconds = Int((gap.to - gap.from) / 1000)
      let length = TextOutput.signedDuration(seconds).replacing("+", with: "")
      svg +=
        "<g class=\"break\" data-from=\"\(Self.iso(gap.from))\" data-to=\"\(Self.iso(gap.to))\">"
      svg += "<title>\(length) with nothing happening, drawn short: from \(Self.iso(gap.from)) "
      svg += "to \(Self.iso(gap.to))</title>"
      svg += "<rect class=\"break-shade\" x=\"\(Self.number(from))\" y=\"28\" "
      svg += "width=\"\(Self.number(max(to - from, 1)))\" height=\"\(Self.number(bottom - 28))\"/>"
      svg += "<text class=\"break-label\" x=\"\(Self.number((from + to) / 2))\" y=\"38\" "
      svg += "text-anchor=\"middle\">≈ \(Self.xml(length))</text></g>"
    }
    for tick in Self.apart(axis.ticks(), axis: axis) {
      let x = Self.number(axis.x(tick.at))
      svg +=
        "<line class=\"tick\" x1=\"\(x)\" y1=\"28\" x2=\"\(x)\" y2=\"\(Self.number(bottom))\"/>"
      svg += "<text class=\"tick-label\" x=\"\(x)\" y=\"22\" text-anchor=\"\(tick.anchor)\" "
      svg += "data-at=\"\(Self.iso(tick.at))\">\(Self.xml(tick.label))</text>"
    }
    return svg + "</g>\n"
  }

  /// The ticks whose labels do not run into the one before, at about 6.5 pixels a character,
  /// with each label's anchor: centred, or kept inside the picture at either end.
  private static func apart(
    _ ticks: [(at: Int64, label: String)], axis: TimeAxis
  ) -> [(at: Int64, label: String, anchor: String)] {
    var kept: [(at: Int64, label: String, anchor: String)] = []
    var lastRight = -Double.infinity
    for tick in ticks {
      let x = axis.x(tick.at)
      let width = Double(tick.label.count) * 6.5
      let anchor =
        x > axis.left + axis.width - width / 2
        ? "end" : x < axis.left + width / 2 ? "start" : "middle"
      let left = anchor == "start" ? x : anchor == "end" ? x - width : x - width / 2
      guard left >= lastRight + 8 else { continue }
      kept.append((tick.at, tick.label, anchor))
      lastRight = left + width
    }
    return kept
  }

  // MARK: Bands

  private func drawBands(
    _ bands: [Timeline.Band], axis: TimeAxis, y: Double, height: Double, labelInset: Double
  ) -> String {
    var svg = ""
    var index = 0
    while index < bands.count {
      var last = index
      // A run of bands each too narrow to see is one band of their changes.
      while last + 1 < bands.count, isNarrow(bands[last], axis), isNarrow(bands[last + 1], axis) {
        last += 1
      }
      if last > index {
        let run = bands[index...last]
        let changes = run.count
        let lastBand = bands[last]
        svg += band(
          Timeline.Band(
            start: bands[index].start, end: lastBand.end, state: "mixed",
            label: "\(changes) changes",
            detail: "\(changes) changes from \(Self.iso(bands[index].start)) to "
              + "\(Self.iso(lastBand.end)); the last:\n\(lastBand.detail)",
            user: nil),
          axis: axis, y: y, height: height, count: changes, labelInset: labelInset)
      } else {
        svg += band(
          bands[index], axis: axis, y: y, height: height, count: 1, labelInset: labelInset)
      }
      index = last + 1
    }
    return svg
  }

  private func isNarrow(_ band: Timeline.Band, _ axis: TimeAxis) -> Bool {
    axis.x(band.end) - axis.x(band.start) < Self.minimumBandWidth * coarseness
  }

  private func band(
    _ band: Timeline.Band, axis: TimeAxis, y: Double, height: Double, count: Int,
    labelInset: Double
  ) -> String {
    let x = axis.x(band.start)
    let width = max(axis.x(band.end) - x, 1)
    let family = band.state.split(separator: ":").first.map(String.init) ?? band.state
    var svg = "<g class=\"band\" data-state=\"\(Self.xml(band.state))\" "
    svg += "data-start=\"\(Self.iso(band.start))\" data-end=\"\(Self.iso(band.end))\""
    if let user = band.user { svg += " data-user=\"\(Self.xml(user))\"" }
    if count > 1 { svg += " data-count=\"\(count)\"" }
    svg += "><title>\(Self.xml(band.detail))</title>"
    svg += "<rect class=\"fill-\(family)\(band.state.hasSuffix(":imported") ? " imported" : "")\" "
    svg += "x=\"\(Self.number(x))\" y=\"\(Self.number(y + 3))\" width=\"\(Self.number(width))\" "
    svg += "height=\"\(Self.number(height - 6))\"/>"
    // Written only where it fits, at about 6.5 pixels a character.
    let room = Int((width - 2 * labelInset) / 6.5)
    if room >= 4 {
      svg += "<text class=\"band-label on-\(family)\" x=\"\(Self.number(x + labelInset))\" "
      svg += "y=\"\(Self.number(y + height / 2 + 4))\">"
      svg += "\(Self.xml(Self.shortened(band.label, to: room)))</text>"
    }
    return svg + "</g>"
  }

  // MARK: Markers

  private func drawMarkers(
    _ markers: [Timeline.Marker], axis: TimeAxis, y: Double, height: Double
  ) -> String {
    let sorted = markers.enumerated().sorted {
      ($0.element.at, $0.offset) < ($1.element.at, $1.offset)
    }
    .map(\.element)
    var svg = ""
    var index = 0
    let middle = y + height / 2
    // Beneath the marks: a line from each fetch's request to its answer, where it is long
    // enough to see.
    for marker in sorted {
      guard let since = marker.since else { continue }
      let from = axis.x(since)
      let to = axis.x(marker.at)
      guard to - from >= 3 else { continue }
      svg += "<line class=\"latency\" data-from=\"\(Self.iso(since))\" "
      svg += "data-at=\"\(Self.iso(marker.at))\" x1=\"\(Self.number(from))\" "
      svg += "y1=\"\(Self.number(middle))\" x2=\"\(Self.number(to))\" "
      svg += "y2=\"\(Self.number(middle))\"/>"
    }
    while index < sorted.count {
      // Drawn whole inside the lane; `data-at` keeps the exact instant.
      let first = min(max(axis.x(sorted[index].at), axis.left + 6), axis.left + axis.width - 6)
      var last = index
      while last + 1 < sorted.count,
        axis.x(sorted[last + 1].at) - first < Self.clusterDistance * coarseness
      {
        last += 1
      }
      let group = sorted[index...last]
      if group.count == 1, let marker = group.first {
        svg += "<g class=\"marker\" data-kind=\"\(Self.xml(marker.style))\" "
        svg += "data-at=\"\(Self.iso(marker.at))\"><title>\(Self.xml(marker.detail))</title>"
        svg += TimelinePatterns.shape(marker.style, x: first, y: middle) + "</g>"
      } else {
        let shown = group.prefix(12).map(\.detail).joined(separator: "\n\n")
        let more = group.count > 12 ? "\n\n… and \(group.count - 12) more" : ""
        let kinds = Set(group.map(\.style)).sorted().joined(separator: " ")
        svg += "<g class=\"marker cluster\" data-kind=\"\(Self.xml(kinds))\" "
        svg +=
          "data-at=\"\(Self.iso(group[index].at))\" data-until=\"\(Self.iso(group[last].at))\" "
        svg += "data-count=\"\(group.count)\"><title>\(group.count) events from "
        svg += "\(Self.iso(group[index].at)) to \(Self.iso(group[last].at))\n\n"
        svg += "\(Self.xml(shown + more))</title>"
        svg += "<circle class=\"cluster-ring\" cx=\"\(Self.number(first))\" "
        svg += "cy=\"\(Self.number(middle))\" r=\"\(group.count > 99 ? 12 : 9)\"/>"
        svg += "<text class=\"cluster-count\" x=\"\(Self.number(first))\" "
        svg += "y=\"\(Self.number(middle + 3.5))\" text-anchor=\"middle\">"
        svg += "\(group.count > 999 ? "999+" : String(group.count))</text></g>"
      }
      index = last + 1
    }
    return svg
  }

  // MARK: Text

  /// An instant as the JSON output writes it.
  static func iso(_ instant: Int64) -> String {
    TextOutput.clamped(SimulationTime.date(instant)).iso8601
  }

  /// A coordinate with at most one decimal: enough for a screen, and short.
  static func number(_ value: Double) -> String {
    let tenths = (value * 10).rounded()
    guard tenths.isFinite, abs(tenths) < 1e12 else { return "0" }
    let whole = Int64(tenths)
    return whole % 10 == 0 ? String(whole / 10) : String(Double(whole) / 10)
  }

  static func shortened(_ text: String, to length: Int) -> String {
    text.count <= length ? text : String(text.prefix(max(1, length - 1))) + "…"
  }

  /// `text` safe inside an XML attribute or element: the five special characters escaped, and
  /// every control character but a line break written out as `\u{…}` (XML 1.0 allows none of
  /// them, and a script's labels come from whoever wrote it).
  static func xml(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
      switch scalar {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&#39;"
      case "\n": out += "\n"
      case _
      where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
        || scalar.value == 0xFFFE || scalar.value == 0xFFFF:
        out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out
  }
}
