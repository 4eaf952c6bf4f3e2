import Testing

@Suite struct CLIPlaceholderTests {}
