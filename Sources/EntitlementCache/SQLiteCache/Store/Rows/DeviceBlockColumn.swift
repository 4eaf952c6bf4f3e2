#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The `device_block` column: what a deviceBlocked decision reports beyond the status and
/// expiry (reason, next allowed change, change budget, redacted device list), as JSON in the
/// snapshot's `deviceAccess` shape, stored only for an installation that is not active.
///
/// One column that is NULL in the common case, rather than six read on every read-through:
/// SQLite copies each text value a read returns.
enum DeviceBlockColumn {
  /// The column's value for a snapshot's facts: nil when there is no device access or it is
  /// active.
  ///
  /// Takes the normalized facts (see ``SnapshotFacts``), which already dropped every field
  /// this build does not know, so a token or anything the server adds never reaches the
  /// column.
  static func encode(_ facts: SnapshotFacts) throws(SnapshotError) -> String? {
    guard let device = facts.deviceAccess, device.status != .known(.active) else { return nil }
    var writer = JSONObjectWriter(unknownFields: [:])
    writer.set("reason", device.reason.map(JSONValue.init))
    writer.set("nextAllowedAt", device.nextAllowedAt.map(JSONValue.init))
    writer.set("changeBudget", device.changeBudget?.json)
    writer.set("devices", .array(device.devices.map(\.json)))
    do {
      let encoder = JSONEncoder()
      encoder.outputFormatting = .sortedKeys
      return String(decoding: try encoder.encode(writer.value), as: UTF8.self)
    } catch {
      throw SnapshotError(path: "deviceAccess", problem: .unencodable)
    }
  }

  /// `device` with the details stored in `column` filled in.
  static func decode(
    _ column: String, into device: DeviceAccessInfo
  ) throws(SnapshotError) -> DeviceAccessInfo {
    let path = "deviceAccess"
    let value: JSONValue
    do {
      value = try JSONParser.parse(Data(column.utf8))
    } catch {
      throw SnapshotError(path: path, problem: .malformedJSON(detail: "stored device block"))
    }
    var reader = try JSONObjectReader(value, path: path)
    var device = device
    device.reason = try reader.optional("reason", JSONField.openEnum)
    device.nextAllowedAt = try reader.optional("nextAllowedAt", JSONField.date)
    device.changeBudget = try reader.optional("changeBudget", DeviceChangeBudget.init(json:path:))
    device.devices =
      try reader.optional("devices") { value, path throws(SnapshotError) in
        try JSONField.array(value, path, DeviceSummary.init(json:path:))
      } ?? []
    return device
  }
}
