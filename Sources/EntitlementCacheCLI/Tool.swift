/// Parses `arguments` (without the program name), runs one command, and returns its status
/// (DESIGN §9). The executable's `main.swift` exits with it; the fuzz targets link this library
/// for its parsers.
package func runTool(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> ExitStatus
{
  do {
    switch try ArgumentParser.parse(arguments, commands: commandSpecs) {
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
