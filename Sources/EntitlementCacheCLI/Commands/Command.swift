/// A subcommand: its help and flags, and what it does.
protocol Command: Sendable {
  static var spec: CommandSpec { get }
  /// Runs the command; output goes to stdout, a failure is thrown and changes nothing.
  static func run(_ invocation: Invocation) throws(CLIError) -> ExitStatus
}

/// Every command, in the order `--help` lists them.
let allCommands: [any Command.Type] = [
  PutCommand.self, ImportCommand.self, RelocateCommand.self, RefreshFailedCommand.self,
  CheckCommand.self,
  ShowCommand.self,
  VerifyCommand.self, ScopesCommand.self, QueueCommand.self, PurgeCommand.self,
  DoctorCommand.self, KeygenCommand.self, SignCommand.self, DemoCommand.self,
  SimulateCommand.self, VersionCommand.self,
]

/// Their specs, in the same order: what the argument parser takes.
package let commandSpecs: [CommandSpec] = allCommands.map { $0.spec }
