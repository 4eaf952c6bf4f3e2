import EntitlementCacheCLI
import Foundation
import TestSupport

/// Drawing a run (`simulate --timeline`): the page of a year of one device, over 5,000
/// events, from the events a simulation recorded. The simulation runs once, untimed.
enum TimelineCases {
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  static func timelineRender() throws -> TimedCase {
    let name = "timeline_render_5000"
    let script = try ScriptParser.parse(Data(LongRunScript.year().utf8))
    let outcome = try SimulationRunner(script: script).run()
    let events = outcome.events
    guard events.count >= 5_000 else {
      throw BenchError.wrongAnswer("\(name): the run recorded \(events.count) events")
    }
    var sink = Sink()
    var largest = 0
    // `largest` is read only after every batch ran.
    return TimedCase(
      name: name, samples: 15,
      batch: { count in
        for _ in 0..<count {
          let page = TimelinePage.html(
            Timeline(script: script, events: events), title: name, eventCount: events.count)
          largest = max(largest, page.utf8.count)
          sink.consume(granted: page.utf8.count < 2_000_000)
        }
      },
      result: { measurement in
        guard sink.operations > 0, sink.granted == sink.operations else {
          throw BenchError.wrongAnswer("\(name): a page of \(largest) bytes, over 2 MB")
        }
        return CaseResult(
          name: name, scopes: 1, entitlements: 1, p50: measurement.median, p99: measurement.p99,
          samples: measurement.perOperation.count, batchSize: measurement.batchSize)
      },
      warmupBatches: 2)
  }
}
