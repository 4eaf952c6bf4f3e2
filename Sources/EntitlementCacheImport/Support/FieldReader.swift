import EntitlementCache

/// One JSON object of the body, read field by field with the path every error names.
///
/// A field that is absent and one that is `null` read the same (nil), except where the
/// mapping asks ``isPresent(_:)``: `expires_date` is `null` for lifetime access, and absent
/// only from a body that is not the server's.
struct FieldReader {
  let path: String
  let fields: [String: JSONValue]

  /// Reads `value` as an object; nil or `null` is `missing`, another type is named.
  init(_ value: JSONValue?, path: String) throws(RevenueCatImportError) {
    switch value {
    case .object(let fields)?:
      self.path = path
      self.fields = fields
    case nil, .null?:
      throw RevenueCatImportError(path, .missing)
    case .some:
      throw RevenueCatImportError(path, .wrongType(expected: "an object"))
    }
  }

  /// `path.key`, or `key` at the top level: the path errors name.
  func path(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

  /// Whether `key` is in the object, `null` included.
  func isPresent(_ key: String) -> Bool { fields[key] != nil }

  /// The value of `key`; nil when absent or `null`.
  private func value(_ key: String) -> JSONValue? {
    switch fields[key] {
    case nil, .null?: nil
    case let value?: value
    }
  }

  func object(_ key: String) throws(RevenueCatImportError) -> FieldReader? {
    guard let value = value(key) else { return nil }
    return try FieldReader(value, path: path(key))
  }

  func requiredObject(_ key: String) throws(RevenueCatImportError) -> FieldReader {
    try FieldReader(fields[key], path: path(key))
  }

  func array(_ key: String) throws(RevenueCatImportError) -> [JSONValue]? {
    guard let value = value(key) else { return nil }
    guard case .array(let items) = value else {
      throw RevenueCatImportError(path(key), .wrongType(expected: "an array"))
    }
    return items
  }

  func string(_ key: String) throws(RevenueCatImportError) -> String? {
    guard let value = value(key) else { return nil }
    guard case .string(let text) = value else {
      throw RevenueCatImportError(path(key), .wrongType(expected: "a string"))
    }
    return text
  }

  func bool(_ key: String) throws(RevenueCatImportError) -> Bool? {
    guard let value = value(key) else { return nil }
    guard case .bool(let flag) = value else {
      throw RevenueCatImportError(path(key), .wrongType(expected: "a boolean"))
    }
    return flag
  }

  /// An ISO-8601 timestamp with a UTC offset that the cache can hold.
  func date(_ key: String) throws(RevenueCatImportError) -> Timestamp? {
    guard let value = value(key) else { return nil }
    guard case .string(let text) = value, let date = Timestamp(rfc3339: text) else {
      throw RevenueCatImportError(path(key), .wrongType(expected: "a date"))
    }
    return date
  }

  /// A whole number of Unix milliseconds the cache can hold as a date. `1.7e12` is accepted,
  /// being whole (the parser reads any integral number that fits in 64 bits as `.integer`,
  /// however written); `1.5` is not.
  func milliseconds(_ key: String) throws(RevenueCatImportError) -> Timestamp? {
    guard let value = value(key) else { return nil }
    guard case .integer(let whole) = value, let date = Timestamp(milliseconds: whole) else {
      throw RevenueCatImportError(path(key), .wrongType(expected: "a date in milliseconds"))
    }
    return date
  }

  /// Each field whose value is an object, by key, read with its path.
  func objects() throws(RevenueCatImportError) -> [(key: String, reader: FieldReader)] {
    var readers: [(key: String, reader: FieldReader)] = []
    for key in fields.keys.sorted() {
      let reader = try FieldReader(fields[key], path: path(key))
      readers.append((key, reader))
    }
    return readers
  }
}
