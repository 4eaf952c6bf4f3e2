#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Parses the command line, runs one command, and exits with its status (DESIGN §9).
func runTool() -> ExitStatus {
  do {
    switch try ArgumentParser.parse(
      Array(CommandLine.arguments.dropFirst()), commands: allCommands.map { $0.spec })
    {
    case .help(let text):
      Console.out(text)
      return .success
    case .run(let arguments):
      guard let command = allCommands.first(where: { $0.spec.name == arguments.command.name })
      else { return .usage }
      return try command.run(try Invocation(arguments))
    }
  } catch {
    Console.error(error.message)
    return error.status
  }
}

exit(runTool().rawValue)
