import Foundation
import TestSupport

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// The timeline's SVG, parsed as XML: each lane's bands and marks with the instants they carry.
struct SVGDocument {
  struct Band {
    var start: String
    var end: String
    var state: String
    var user: String?
    /// How many of the JSON's bands it stands for: more than one where they were too narrow.
    var count: Int
  }

  struct Marker {
    var at: Date
    var until: Date
    var count: Int
  }

  /// An empty document, which the reader fills.
  private init() {}

  private(set) var root: [String: String] = [:]
  private(set) var elements: [String] = []
  private var bandsByLane: [String: [Band]] = [:]
  private var markersByLane: [String: [Marker]] = [:]
  private var latenciesByLane: [String: [(from: String, at: String)]] = [:]
  /// Every hover text, in document order.
  private(set) var titles: [String] = []
  /// The axis's ticks: each label with the instant it stands for.
  private(set) var ticks: [(at: String, label: String)] = []

  func bands(in lane: String) -> [Band] { bandsByLane[lane] ?? [] }
  func markers(in lane: String) -> [Marker] { markersByLane[lane] ?? [] }
  /// The lines drawn from a fetch's request to its answer.
  func latencies(in lane: String) -> [(from: String, at: String)] { latenciesByLane[lane] ?? [] }

  struct NotWellFormed: Error, CustomStringConvertible {
    var description: String
  }

  init(page: String) throws {
    guard let start = page.range(of: "<svg xmlns"), let end = page.range(of: "</svg>") else {
      throw NotWellFormed(description: "no <svg> in the page")
    }
    let reader = Reader()
    let parser = XMLParser(data: Data(page[start.lowerBound..<end.upperBound].utf8))
    parser.delegate = reader
    guard parser.parse() else {
      throw NotWellFormed(description: parser.parserError.map { "\($0)" } ?? "not XML")
    }
    self = reader.document
  }

  /// Collects the document as the parser reports it; used on one thread, by one parse.
  private final class Reader: NSObject, XMLParserDelegate {
    var document = SVGDocument()
    var lane: String?
    /// The text of the `<title>` being read.
    var title: String?
    /// The tick label being read.
    var tick: (at: String, label: String)?

    func parser(
      _ parser: XMLParser, didStartElement name: String, namespaceURI: String?,
      qualifiedName: String?, attributes: [String: String] = [:]
    ) {
      document.elements.append(name)
      if name == "svg", document.root.isEmpty { document.root = attributes }
      let classes = Set((attributes["class"] ?? "").split(separator: " ").map(String.init))
      if name == "title" { title = "" }
      if name == "text", classes.contains("tick-label") {
        tick = (attributes["data-at"] ?? "", "")
      }
      if name == "line", classes.contains("latency"), let lane {
        document.latenciesByLane[lane, default: []].append(
          (attributes["data-from"] ?? "", attributes["data-at"] ?? ""))
      }
      guard name == "g" else { return }
      if classes.contains("lane") { lane = attributes["data-lane"] }
      guard let lane else { return }
      if classes.contains("band") {
        document.bandsByLane[lane, default: []].append(
          Band(
            start: attributes["data-start"] ?? "", end: attributes["data-end"] ?? "",
            state: attributes["data-state"] ?? "", user: attributes["data-user"],
            count: Int(attributes["data-count"] ?? "1") ?? 1))
      } else if classes.contains("marker") {
        let at = Instant.date(attributes["data-at"] ?? "")
        document.markersByLane[lane, default: []].append(
          Marker(
            at: at, until: attributes["data-until"].map(Instant.date) ?? at,
            count: Int(attributes["data-count"] ?? "1") ?? 1))
      }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
      title? += string
      tick?.label += string
    }

    func parser(
      _ parser: XMLParser, didEndElement name: String, namespaceURI: String?,
      qualifiedName: String?
    ) {
      if name == "title", let text = title { document.titles.append(text) }
      if name == "title" { title = nil }
      if name == "text", let tick {
        document.ticks.append(tick)
        self.tick = nil
      }
    }
  }
}

/// Instants as the tool prints them, with or without milliseconds.
enum Instant {
  static func date(_ text: String) -> Date {
    let withFraction = ISO8601DateFormatter()
    withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return withFraction.date(from: text) ?? ISO8601DateFormatter().date(from: text)
      ?? .distantPast
  }
}

/// The timeline tests' scripts beside the example field reports.
enum Scripts {
  static let active = """
    { "snapshot": { "verification": "verified", "entitlements": { "pro": {
      "status": "active", "expiresAt": "2026-12-30T12:00:00Z", "source": "purchase" } } } }
    """

  /// A check with nothing stored: one event.
  static let oneEvent = """
    { "start": "2026-11-30T12:00:00Z", \(SampleScope.scriptIdentity),
      "steps": [ { "at": "+0s", "do": "check", "entitlement": "pro" } ] }
    """

  /// Alice has pro; Bob logs in with no network; she logs back in.
  static let offlineSwitch = """
    { "start": "2026-11-30T12:00:00Z", "watch": ["pro"], \(SampleScope.scriptIdentity),
      "server": { "alice": [ \(active) ], "bob": [ { "fail": "transient" } ] },
      "steps": [ { "at": "+0s", "do": "start" }, { "at": "+2m", "do": "logIn", "user": "bob" },
                 { "at": "+3m", "do": "background" },
                 { "at": "+4m", "do": "logIn", "user": "alice" },
                 { "at": "+5m", "do": "check", "entitlement": "pro" } ] }
    """

  /// Signed answers: a forged one, then a valid one.
  static let forged = """
    { "start": "2026-11-30T12:00:00Z", "watch": ["pro"], "signed": true, \(SampleScope.scriptIdentity),
      "server": { "alice": [
        { "snapshot": { "entitlements": { "pro": { "status": "active",
          "expiresAt": "2026-12-30T12:00:00Z" } } }, "signature": "forged" },
        { "snapshot": { "entitlements": { "pro": { "status": "active",
          "expiresAt": "2026-12-30T12:00:00Z" } } } } ] },
      "steps": [ { "at": "+0s", "do": "start" }, { "at": "+10m", "do": "refresh" },
                 { "at": "+11m", "do": "check", "entitlement": "pro" } ] }
    """

  /// A purchase the server says another user owns.
  static let conflict = """
    { "start": "2026-11-30T12:00:00Z", "watch": ["pro"], \(SampleScope.scriptIdentity),
      "server": { "alice": [ \(active), { "post": "conflict", "resolution": "login_required" } ] },
      "steps": [ { "at": "+0s", "do": "start" },
                 { "at": "+1m", "do": "purchase", "transaction": "t-1", "product": "pro" },
                 { "at": "+2m", "do": "check", "entitlement": "pro" } ] }
    """

  /// What an SDK's previous version cached, ten days before the scripts' start.
  static let previousCache = """
    {"requestDate":"2026-11-25T12:00:00Z","entitlements":{"pro":{"status":"active",
    "expiresAt":"2026-12-25T12:00:00Z"}}}
    """

  /// An answer that takes 30 seconds to come, on a run of a minute.
  static let slowAnswer = """
    { "start": "2026-11-30T12:00:00Z", "watch": ["pro"], \(SampleScope.scriptIdentity),
      "server": { "alice": [ { "snapshot": { "verification": "verified", "entitlements": {
        "pro": { "status": "active", "expiresAt": "2026-12-30T12:00:00Z" } } },
        "latency": "30s" } ] },
      "steps": [ { "at": "+0s", "do": "start" },
                 { "at": "+1m", "do": "check", "entitlement": "pro" } ] }
    """

  /// On a file holding an import: offline at launch, then the first refresh replaces it.
  static let afterImport = """
    { "start": "2026-11-30T12:00:00Z", "db": "imported.sqlite", "watch": ["pro"], \(SampleScope.scriptIdentity),
      "server": { "alice": [ { "fail": "transient" }, \(active) ] },
      "steps": [ { "at": "+0s", "do": "start", "in": "background" },
                 { "at": "+1m", "do": "check", "entitlement": "pro" },
                 { "at": "+10m", "do": "refresh" },
                 { "at": "+11m", "do": "check", "entitlement": "pro" } ] }
    """
}
