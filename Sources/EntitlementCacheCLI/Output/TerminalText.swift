/// The one place that decides which characters may reach a terminal.
///
/// A snapshot's strings come from a server, or from a file a customer sent; a `--reason` from
/// whoever typed it. None of them is trusted with the terminal: an ESC starts a sequence that
/// can retitle the window, recolour what follows or move the cursor over earlier lines; a CR
/// or a NUL hides text; a bidirectional override makes a line read in another order than its
/// bytes. Such a character is shown as a Swift escape, `\u{1B}`, which a person can read and
/// which no terminal acts on.
enum TerminalText {
  /// Whether `scalar` is one the terminal or the reader would act on rather than show:
  /// the C0 controls (NUL through US), DEL, the C1 controls (U+0080–U+009F, which some
  /// terminals read as ESC sequences), the line and paragraph separators, and the
  /// bidirectional formatting characters (the Unicode Bidirectional Algorithm's embeddings,
  /// overrides, isolates and marks), and the characters that show nothing by themselves.
  static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x00...0x1F, 0x7F...0x9F: true
    case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
    // Invisible characters that make two different strings look the same: the soft hyphen,
    // the combining grapheme joiner, the Hangul fillers, the Khmer inherent vowels, the
    // Mongolian variation selectors and vowel separator, the zero-width space, the word
    // joiner and the invisible operators, the deprecated format characters, the byte order
    // mark, the interlinear annotation marks, the musical formatting marks and the language
    // tag. The joiners (U+200C, U+200D), the variation selectors (U+FE00–U+FE0F) and the tag
    // characters (U+E0020–U+E007F) are left alone: emoji sequences (a subdivision's flag)
    // and several scripts need them.
    case 0x00AD, 0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B...0x180F, 0x200B,
      0x2060...0x2064, 0x206A...0x206F, 0x3164, 0xFEFF, 0xFFA0, 0xFFF9...0xFFFB,
      0x1D173...0x1D17A, 0xE0000...0xE001F:
      true
    default: false
    }
  }

  /// `U+001B`: how an error names a character it refuses.
  static func codePoint(_ scalar: Unicode.Scalar) -> String {
    let hex = String(scalar.value, radix: 16, uppercase: true)
    return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
  }

  /// `text` with every unsafe character written as `\u{HEX}`, the newline included, and a
  /// backslash as `\\`, so a stored `\u{1B}` never reads as an escaped ESC: for a value
  /// that must stay on its line (a table cell, a field of a sentence, an error).
  static func field(_ text: String) -> String {
    escaped(text, keepingNewlines: false)
  }

  /// The longest part of a value an error quotes back: a 100 KB argument gets a one-line
  /// error, not a 100 KB one.
  static let excerptLength = 80

  /// `text`, or its first `limit` (by default ``excerptLength``) characters and `…`.
  static func excerpt(_ text: String, limit: Int = excerptLength) -> String {
    text.count <= limit ? text : text.prefix(limit) + "…"
  }

  /// `text` with every unsafe character but the newline written as `\u{HEX}`: for whole
  /// output the tool composed, whose own line breaks are meant.
  static func lines(_ text: String) -> String {
    escaped(text, keepingNewlines: true)
  }

  private static func escaped(_ text: String, keepingNewlines: Bool) -> String {
    // A field escapes its backslashes too; whole output keeps them (help ends lines in `\`).
    func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
      keepingNewlines ? scalar != "\n" && isUnsafe(scalar) : scalar == "\\" || isUnsafe(scalar)
    }
    // Nearly all output is clean: scanning first costs one pass and no copy.
    guard text.unicodeScalars.contains(where: needsEscape) else { return text }
    var output = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      if scalar == "\\", !keepingNewlines {
        output.append(contentsOf: #"\\"#.unicodeScalars)
      } else if needsEscape(scalar) {
        output.append(
          contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
      } else {
        output.append(scalar)
      }
    }
    return String(output)
  }
}
