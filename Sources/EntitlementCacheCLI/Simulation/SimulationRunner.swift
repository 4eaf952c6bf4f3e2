import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Runs a script: the real ``EntitlementClient`` on a `SimulatedRuntime`, against the scripted
/// server, with an ``SQLiteCustomerInfoCache`` whose clock is the runtime's, and records what
/// the app would have seen.
///
/// Each step runs at its time as a task of the simulation, and the simulation is drained after
/// it: a step that waits (a restore, a `fetchCurrent`, a log-in) goes on while later steps run.
/// After the last step the virtual clock moves from wait to wait while an answer is on its way
/// or a step still waits for one; then the run ends, and timers due later never fire.
///
/// Needs task executors, as `SimulatedRuntime` does.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
package struct SimulationRunner {
  let script: SimulationScript

  package init(script: SimulationScript) {
    self.script = script
  }

  /// What a run recorded, and the failure that cut it short, if one did.
  package struct Outcome: Sendable {
    package var events: [SimulationEvent]
    /// A storage failure (the cache could not be opened again, a fetch's answer or a purchase
    /// could not be stored, or a log-out could not remove the previous snapshot): the events
    /// before it are still worth printing.
    package var failure: CLIError?
    /// How many of the script's steps began: all of them, unless the failure stopped the run.
    package var stepsRun: Int
  }

  /// The device's boot session: one boot clock for the run, since a relaunch is a new process,
  /// not a reboot (unless it is a locked one, which restarts the device in a new session), so
  /// the boot clock of the time model (`Sources/EntitlementCache/EntitlementCache.docc/Articles/TimeModel.md`) carries
  /// across it, as on a phone. Each run is a boot of its own: a kept database's readings from
  /// an earlier run, whose boot clock also started at zero, must not look like this boot's. The
  /// name is never printed and never equals a stored one, so the output does not depend on it.
  static func bootSession() -> String { "simulated-boot-" + UUID().uuidString }

  /// Runs every step, then closes the cache and removes a throw-away database.
  ///
  /// - Throws: ``CLIError`` when the database cannot be created or opened.
  package func run() throws(CLIError) -> Outcome {
    if let database = script.database {
      try InputFile.checkLength(of: database, named: "db")
      if InputFile.isDirectory(database) {
        throw CLIError.storage("db: \(TerminalText.excerpt(database)) is a directory, not a file")
      }
      if let kind = InputFile.nonRegularKind(database) {
        throw CLIError.storage(
          "db: \(TerminalText.excerpt(database)) is \(kind), not a regular file")
      }
    }
    let scratch = script.database == nil ? try ScratchDirectory.make("simulate") : nil
    defer {
      if let scratch { ScratchDirectory.remove(scratch) }
    }
    let path = script.database ?? (scratch ?? "") + "/simulation.sqlite"
    let device = try SimulatedDevice(script: script, path: path)
    return device.run()
  }
}
