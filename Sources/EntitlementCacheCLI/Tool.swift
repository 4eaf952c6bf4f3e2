/// Parses `arguments` (without the program name), runs one command, and returns its status
/// (the exit statuses of the tool's manual, <doc:CommandLineTool>).
///
/// The arguments are the process's bytes: each must be valid UTF-8, or the run ends with a
/// usage error that names the flag (``CommandLineParser/text(of:commands:)``). Swift's own
/// `CommandLine.arguments` repairs invalid bytes into U+FFFD, which would make two different
/// user IDs one scope.
package func runTool(arguments: [[UInt8]]) -> ExitStatus {
  do {
    return try run(CommandLineParser.text(of: arguments, commands: commandSpecs))
  } catch {
    Console.error(error.message)
    return error.status
  }
}

/// Parses arguments already known to be text, runs one command, and returns its status. The
/// fuzz targets and tests call this; the executable calls ``runTool(arguments:)``.
package func runTool(_ arguments: [String]) -> ExitStatus {
  do {
    return try run(arguments)
  } catch {
    Console.error(error.message)
    return error.status
  }
}

private func run(_ arguments: [String]) throws(CLIError) -> ExitStatus {
  switch try CommandLineParser.parse(arguments, commands: commandSpecs) {
  case .help(let text):
    Console.out(text)
    return .success
  case .run(let arguments):
    guard let command = allCommands.first(where: { $0.spec.name == arguments.command.name })
    else { return .usage }
    return try command.run(try Invocation(arguments))
  }
}
