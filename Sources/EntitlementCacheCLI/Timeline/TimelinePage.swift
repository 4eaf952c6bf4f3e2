/// The self-contained HTML page `simulate --timeline` writes: the picture as inline SVG, its
/// style, and a legend. No script, no network, no font download: it opens from a mail
/// attachment, offline, as it was written.
package enum TimelinePage {
  /// The page of `timeline`, titled `title`, for a run of `eventCount` events.
  package static func html(
    _ timeline: Timeline, title: String, eventCount: Int, stopped: String? = nil
  ) -> String {
    let span = TextOutput.signedDuration(Int((timeline.end - timeline.start) / 1000))
      .replacing("+", with: "")
    var page = """
      <!DOCTYPE html>
      <html lang="en">
      <head>
      <meta charset="utf-8">
      <meta name="viewport" content="width=device-width, initial-scale=1">
      <title>\(TimelineSVG.xml(Timeline.safe(title)))</title>
      <style>\(style)</style>
      </head>
      <body>
      <h1>\(TimelineSVG.xml(Timeline.safe(title)))</h1>
      <p class="summary">From \(TimelineSVG.iso(timeline.start)) to \
      \(TimelineSVG.iso(timeline.end)) (\(span)) in virtual time, \(eventCount) \
      event\(eventCount == 1 ? "" : "s"), times in UTC. Where nothing happens for long, the \
      axis is drawn short (≈ gives the true length). Hover over a band or a mark for its exact \
      instant and what decided it.</p>

      """
    if let stopped { page += "<p class=\"stopped\">\(TimelineSVG.xml(stopped))</p>\n" }
    page += picture(timeline)
    page += legend()
    page += "</body>\n</html>\n"
    return page
  }

  /// The largest page written: whatever the run, a page mails and opens quickly.
  static let sizeLimit = 1_900_000

  /// The picture, drawn finer first and coarser (bands merged over more pixels, marks
  /// clustered over more) until it fits in ``sizeLimit`` with room for the rest of the page.
  private static func picture(_ timeline: Timeline) -> String {
    var svg = ""
    for coarseness in [1.0, 2, 4, 8, 16, 32] {
      svg = TimelineSVG(timeline: timeline, coarseness: coarseness).render()
      if svg.utf8.count < sizeLimit - 40_000 { break }
    }
    return svg
  }

  private static func legend() -> String {
    var html = "<section class=\"legend\"><h2>Legend</h2><ul>"
    for item in TimelinePatterns.legend {
      html += "<li><svg width=\"34\" height=\"16\" aria-hidden=\"true\">"
      html += "<rect class=\"fill-\(item.state)\" width=\"34\" height=\"16\"/></svg>"
      html +=
        "<span><b>\(TimelineSVG.xml(item.name))</b>: \(TimelineSVG.xml(item.meaning))</span></li>"
    }
    html += "<li><svg width=\"34\" height=\"16\" aria-hidden=\"true\"><rect class=\"fill-fresh "
    html += "imported\" x=\"1\" y=\"1\" width=\"32\" height=\"14\"/></svg><span><b>imported</b>: a "
    html += "dashed outline, until the first refresh replaces it</span></li>"
    for mark in TimelinePatterns.marks {
      html += "<li><svg width=\"34\" height=\"26\" aria-hidden=\"true\">"
      if mark.style == "cluster" {
        html += "<circle class=\"cluster-ring\" cx=\"17\" cy=\"13\" r=\"9\"/>"
        html += "<text class=\"cluster-count\" x=\"17\" y=\"16.5\" text-anchor=\"middle\">3</text>"
      } else {
        html += TimelinePatterns.shape(mark.style, x: 17, y: 13)
      }
      html += "</svg><span>\(TimelineSVG.xml(mark.meaning))</span></li>"
    }
    return html + "</ul></section>\n"
  }

  /// The page's style: the fills and marks of ``TimelinePatterns``, in one place.
  static let style = """
    body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", \
    sans-serif; color: #1a1a1a; background: #fff; margin: 20px; }
    h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 18px 0 6px; }
    .summary { color: #444; margin: 0 0 10px; }
    .stopped { color: #8A2E00; font-weight: 600; margin: 0 0 10px; }
    svg.timeline { display: block; max-width: 100%; height: auto; }
    svg text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", \
    sans-serif; }
    .lane-ground { fill: #FAFAFA; stroke: #E2E2E2; }
    .lane-title { font-size: 12px; font-weight: 600; fill: #222; }
    .tick { stroke: #D8D8D8; stroke-width: 1; }
    .tick-label { font-size: 11px; fill: #444; }
    .break-shade { fill: #F3F3F3; stroke: #BDBDBD; stroke-dasharray: 2 3; }
    .break-label { font-size: 10px; fill: #666; }
    .band rect { stroke: #FFFFFF; stroke-width: 0.8; }
    .band-label { font-size: 11px; fill: #111; pointer-events: none; paint-order: stroke; \
    stroke: rgba(255, 255, 255, 0.85); stroke-width: 3px; }
    .band-label.on-granted, .band-label.on-clock-set, .band-label.on-locked { fill: #FFFFFF; \
    stroke: none; }
    .fill-granted { fill: #009E73; }
    .fill-denied { fill: url(#p-denied); }
    .fill-offline_unavailable { fill: url(#p-offline_unavailable); }
    .fill-device_blocked { fill: url(#p-device_blocked); }
    .fill-fresh { fill: #A8D8F3; }
    .fill-stale { fill: url(#p-stale); }
    .fill-offline { fill: url(#p-offline); }
    .fill-none { fill: #F1F1F1; }
    .fill-user { fill: #E6E0F2; }
    .fill-foreground { fill: #F0E442; }
    .fill-background { fill: url(#p-background); }
    .fill-clock { fill: #F1F1F1; }
    .fill-clock-set { fill: #0072B2; }
    .fill-locked { fill: url(#p-locked); }
    .fill-unlocked { fill: #F1F1F1; }
    .fill-answering { fill: #DDEFE5; }
    .fill-no-answer { fill: url(#p-no-answer); }
    .fill-mixed { fill: url(#p-mixed); }
    .imported { stroke: #1A1A1A !important; stroke-width: 1.6 !important; \
    stroke-dasharray: 4 3; }
    .mark-ok { fill: #009E73; stroke: #0B3D2E; stroke-width: 1; }
    .mark-transient { fill: #FFFFFF; stroke: #B07A00; stroke-width: 2; }
    .mark-rejected { fill: none; stroke: #D55E00; stroke-width: 2.6; }
    .mark-network { fill: #0072B2; }
    .latency { stroke: #555; stroke-width: 1.6; stroke-dasharray: 1 2; }
    .mark-synced { fill: #009E73; stroke: #0B3D2E; stroke-width: 1; }
    .mark-conflict { fill: #D55E00; }
    .mark-bound { fill: #FFFFFF; stroke: #777; stroke-width: 1.6; }
    .mark-pending { fill: #FFFFFF; stroke: #0072B2; stroke-width: 2; }
    .mark-relaunch { fill: #1A1A1A; }
    .mark-login { fill: #0072B2; stroke: #0072B2; stroke-width: 1.6; }
    .mark-logout { fill: #CC79A7; stroke: #CC79A7; stroke-width: 1.6; }
    .mark-event { fill: #6B6B6B; }
    .mark-check { stroke: #111; stroke-width: 2; }
    .cluster-ring { fill: #FFFFFF; stroke: #333; stroke-width: 1.4; }
    .cluster-count { font-size: 9px; font-weight: 700; fill: #111; }
    .marker:hover, .band:hover { opacity: 0.75; }
    .legend ul { list-style: none; padding: 0; columns: 2 360px; margin: 0; }
    .legend li { display: flex; align-items: center; gap: 8px; margin: 3px 0; \
    break-inside: avoid; }
    @media print { .marker:hover, .band:hover { opacity: 1; } }
    """
}
