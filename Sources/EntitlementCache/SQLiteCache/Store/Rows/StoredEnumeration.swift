/// A server enumeration the store writes as its raw value's text.
protocol StoredEnumeration: CaseIterable, RawRepresentable<String>, Sendable, Hashable {
  /// The values' UTF-8 forms, built once per process.
  static var storedForms: StoredForms<Self> { get }
}

/// The UTF-8 form of every value of an enumeration, built once, so a row's text is matched on
/// its bytes: asking the type for `allCases` built an array on every column read.
struct StoredForms<Value: CaseIterable & RawRepresentable<String> & Sendable>: Sendable {
  /// A value's form as three words, zero past its end: a column is matched by loading it into
  /// the same three words and comparing integers.
  private struct Form: Sendable {
    var count: Int
    var words: Words
    var value: Value
  }

  private typealias Words = (UInt64, UInt64, UInt64)

  /// The longest form that fits ``Words``; every value of the store's enumerations does.
  private static var capacity: Int { MemoryLayout<Words>.size }

  private let forms: [Form]
  /// Forms too long for three words, matched byte by byte.
  private let longForms: [(utf8: [UInt8], value: Value)]

  init() {
    var forms: [Form] = []
    var longForms: [(utf8: [UInt8], value: Value)] = []
    for value in Value.allCases {
      let utf8 = Array(value.rawValue.utf8)
      if utf8.count <= Self.capacity {
        forms.append(
          utf8.withUnsafeBytes { Form(count: $0.count, words: Self.words($0), value: value) })
      } else {
        longForms.append((utf8, value))
      }
    }
    self.forms = forms
    self.longForms = longForms
  }

  /// The value whose form is `bytes`, or nil when this build knows none.
  func value(of bytes: UnsafeRawBufferPointer) -> Value? {
    guard bytes.count <= Self.capacity else {
      return longForms.first { $0.utf8.elementsEqual(bytes) }?.value
    }
    let words = Self.words(bytes)
    for form in forms
    where form.count == bytes.count && form.words.0 == words.0 && form.words.1 == words.1
      && form.words.2 == words.2
    {
      return form.value
    }
    return nil
  }

  /// `bytes`, at most ``capacity`` of them, zero-padded into three words.
  private static func words(_ bytes: UnsafeRawBufferPointer) -> Words {
    var words: Words = (0, 0, 0)
    withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: bytes) }
    return words
  }
}

extension EntitlementStatus: StoredEnumeration {
  static let storedForms = StoredForms<Self>()
}

extension VerificationStatus: StoredEnumeration {
  static let storedForms = StoredForms<Self>()
}

extension EntitlementSource: StoredEnumeration {
  static let storedForms = StoredForms<Self>()
}

extension ClaimHint: StoredEnumeration {
  static let storedForms = StoredForms<Self>()
}

extension DeviceAccessStatus: StoredEnumeration {
  static let storedForms = StoredForms<Self>()
}
