/// How each state and mark looks. Colours are the Okabe-Ito palette, which colour-blind
/// readers tell apart, and each state also has a pattern of its own and a lightness apart from
/// the others, so a grey-scale print still separates them; a band wide enough says its state in
/// words too.
enum TimelinePatterns {
  /// The `<defs>` of the picture: one pattern per state that is not a plain fill.
  static let definitions = """
    <defs>
    <pattern id="p-denied" width="7" height="7" patternUnits="userSpaceOnUse" \
    patternTransform="rotate(45)"><rect width="7" height="7" fill="#F6C9AC"/>\
    <rect width="3" height="7" fill="#D55E00"/></pattern>
    <pattern id="p-offline_unavailable" width="6" height="6" patternUnits="userSpaceOnUse">\
    <rect width="6" height="6" fill="#FBE6BC"/><circle cx="3" cy="3" r="1.6" fill="#B07A00"/>\
    </pattern>
    <pattern id="p-device_blocked" width="7" height="7" patternUnits="userSpaceOnUse">\
    <rect width="7" height="7" fill="#F3D9E8"/><path d="M0 0L7 7M7 0L0 7" stroke="#A0507F" \
    stroke-width="1.4"/></pattern>
    <pattern id="p-stale" width="6" height="6" patternUnits="userSpaceOnUse">\
    <rect width="6" height="6" fill="#DCEFFA"/><rect y="4" width="6" height="2" fill="#56B4E9"/>\
    </pattern>
    <pattern id="p-offline" width="6" height="6" patternUnits="userSpaceOnUse">\
    <rect width="6" height="6" fill="#E4E4E4"/><circle cx="3" cy="3" r="1.4" fill="#6B6B6B"/>\
    </pattern>
    <pattern id="p-background" width="8" height="8" patternUnits="userSpaceOnUse" \
    patternTransform="rotate(-45)"><rect width="8" height="8" fill="#E9E9E9"/>\
    <rect width="2" height="8" fill="#A9A9A9"/></pattern>
    <pattern id="p-locked" width="8" height="8" patternUnits="userSpaceOnUse">\
    <rect width="8" height="8" fill="#4D4D4D"/><rect width="4" height="4" fill="#2B2B2B"/>\
    <rect x="4" y="4" width="4" height="4" fill="#2B2B2B"/></pattern>
    <pattern id="p-no-answer" width="10" height="6" patternUnits="userSpaceOnUse">\
    <rect width="10" height="6" fill="#EFEFEF"/><rect y="2" width="5" height="2" \
    fill="#8C8C8C"/></pattern>
    <pattern id="p-mixed" width="4" height="4" patternUnits="userSpaceOnUse">\
    <rect width="4" height="4" fill="#D6D6D6"/><rect width="1.5" height="4" fill="#444"/>\
    </pattern>
    </defs>
    """

  /// The states the legend explains, with what each means.
  static let legend: [(state: String, name: String, meaning: String)] = [
    ("granted", "granted", "solid green"),
    ("denied", "denied", "orange stripes; the reason is in the band and its hover text"),
    ("offline_unavailable", "offline unavailable", "amber dots; no usable snapshot offline"),
    ("device_blocked", "device blocked", "pink cross-hatch; entitled, but not on this device"),
    ("fresh", "fresh snapshot", "light blue"),
    ("stale", "stale snapshot", "blue lines; a refresh is due"),
    ("offline", "offline snapshot", "grey dots; the last refresh failed"),
    ("foreground", "app in the foreground", "yellow"),
    ("background", "app in the background", "grey stripes"),
    ("clock-set", "device clock set", "dark blue; the label gives how far from true time"),
    ("locked", "device locked", "dark checks; restarted and not unlocked yet: files refused"),
    ("answering", "server answers", "pale green; the last fetch got an answer"),
    ("no-answer", "no answer", "grey dashes; the last fetch got none (offline, a timeout, a 5xx)"),
    ("mixed", "many changes", "grey bars: too many to draw apart here; hover for them"),
  ]

  /// The marks the legend explains.
  static let marks: [(style: String, meaning: String)] = [
    ("fetch-ok", "a fetch stored or confirmed the snapshot"),
    ("fetch-transient", "a fetch failed transiently (offline, 5xx)"),
    ("fetch-rejected", "a fetch was rejected (4xx), or its answer could not be stored"),
    ("latency", "a dotted line from a fetch's request to its answer, where it took time"),
    ("network", "the network came back"),
    ("purchase-pending", "a purchase queued, or waiting to be posted again"),
    ("purchase-synced", "a purchase posted and attributed"),
    ("purchase-conflict", "a purchase in conflict, rejected or expired"),
    ("relaunch", "the app killed and launched again"),
    ("login", "a log-in"),
    ("logout", "a log-out"),
    ("event", "a diagnostic the cache or the client told"),
    ("check", "a check step read the entitlement (a tick above its band)"),
    ("cluster", "several marks too close to draw apart; hover for them"),
  ]

  /// The shape of a mark of `style`, centred at (`x`, `y`).
  static func shape(_ style: String, x: Double, y: Double) -> String {
    let cx = TimelineSVG.number(x)
    let cy = TimelineSVG.number(y)
    func at(_ dx: Double, _ dy: Double) -> String {
      "\(TimelineSVG.number(x + dx)) \(TimelineSVG.number(y + dy))"
    }
    switch style {
    case "fetch-ok":
      return "<circle class=\"mark-ok\" cx=\"\(cx)\" cy=\"\(cy)\" r=\"5\"/>"
    case "fetch-transient":
      return "<path class=\"mark-transient\" d=\"M\(at(0, -6))L\(at(6, 5))L\(at(-6, 5))Z\"/>"
    case "fetch-rejected":
      return
        "<path class=\"mark-rejected\" d=\"M\(at(-5, -5))L\(at(5, 5))M\(at(5, -5))L\(at(-5, 5))\"/>"
    case "network":
      return
        "<path class=\"mark-network\" d=\"M\(at(0, -6))L\(at(6, 0))L\(at(0, 6))L\(at(-6, 0))Z\"/>"
    case "purchase-synced":
      return
        "<path class=\"mark-synced\" d=\"M\(at(0, -6))L\(at(6, 0))L\(at(0, 6))L\(at(-6, 0))Z\"/>"
    case "purchase-conflict", "purchase-rejected", "purchase-expired":
      return "<rect class=\"mark-conflict\" x=\"\(TimelineSVG.number(x - 5))\" "
        + "y=\"\(TimelineSVG.number(y - 5))\" width=\"10\" height=\"10\"/>"
    case "purchase-bound":
      return "<rect class=\"mark-bound\" x=\"\(TimelineSVG.number(x - 5))\" "
        + "y=\"\(TimelineSVG.number(y - 5))\" width=\"10\" height=\"10\"/>"
    case "relaunch":
      return "<rect class=\"mark-relaunch\" x=\"\(TimelineSVG.number(x - 1.5))\" "
        + "y=\"\(TimelineSVG.number(y - 12))\" width=\"3\" height=\"24\"/>"
    case "login", "logout":
      return
        "<path class=\"mark-\(style)\" d=\"M\(at(0, 12))L\(at(0, -12))L\(at(9, -8))L\(at(0, -4))\"/>"
    case "latency":
      return "<path class=\"latency\" d=\"M\(at(-12, 0))L\(at(7, 0))\"/>"
        + "<circle class=\"mark-ok\" cx=\"\(TimelineSVG.number(x + 9))\" cy=\"\(cy)\" r=\"4\"/>"
    case "check":
      // A tick at the top of the entitlement's band: where a `check` step read it.
      return "<path class=\"mark-check\" d=\"M\(at(0, -14))L\(at(0, -6))\"/>"
    case "event":
      return "<rect class=\"mark-event\" x=\"\(TimelineSVG.number(x - 3.5))\" "
        + "y=\"\(TimelineSVG.number(y - 3.5))\" width=\"7\" height=\"7\"/>"
    default:
      // Pending and posting purchases.
      return "<circle class=\"mark-pending\" cx=\"\(cx)\" cy=\"\(cy)\" r=\"5\"/>"
    }
  }
}
