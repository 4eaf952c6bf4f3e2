#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Whether this installation may use the customer's access, as the server decided.
///
/// A blocked installation of a customer who is entitled is *not* "not entitled": the decision
/// says `deviceBlocked` so the app shows device management, never "buy again".
public struct DeviceAccessInfo: Sendable, Hashable, JSONModel {
  /// Active or blocked. An unknown status is treated as blocked.
  public var status: OpenEnum<DeviceAccessStatus>
  /// Why the installation is blocked.
  public var reason: OpenEnum<DeviceBlockReason>?
  /// The server-issued end of this installation's offline authorization.
  public var expiresAt: Date?
  /// When the next device change is allowed.
  public var nextAllowedAt: Date?
  /// The rolling budget of device changes.
  public var changeBudget: DeviceChangeBudget?
  /// The customer's activations, redacted by the server to an ID, a label and a time.
  public var devices: [DeviceSummary] = []
  /// Fields this build does not know, kept as the server sent them.
  package var unknownFields: [String: JSONValue] = [:]
}

// Initializers in an extension, so the memberwise one (every property but the status
// defaulted) stays for the read-through to build through (Architecture, "Initializers of values
// on the read path").
extension DeviceAccessInfo {
  init(json: JSONValue, path: String) throws(SnapshotError) {
    var reader = try JSONObjectReader(json, path: path)
    status = try reader.required("status", JSONField.openEnum)
    reason = try reader.optional("reason", JSONField.openEnum)
    expiresAt = try reader.optional("expiresAt", JSONField.date)
    nextAllowedAt = try reader.optional("nextAllowedAt", JSONField.date)
    changeBudget = try reader.optional("changeBudget", DeviceChangeBudget.init(json:path:))
    devices =
      try reader.optional("devices") { value, path throws(SnapshotError) in
        try JSONField.array(value, path, DeviceSummary.init(json:path:))
      } ?? []
    unknownFields = reader.unknownFields
  }

  var json: JSONValue {
    var writer = JSONObjectWriter(unknownFields: unknownFields)
    writer.set("status", JSONValue(status))
    writer.set("reason", reason.map(JSONValue.init))
    writer.set("expiresAt", expiresAt.map(JSONValue.init))
    writer.set("nextAllowedAt", nextAllowedAt.map(JSONValue.init))
    writer.set("changeBudget", changeBudget?.json)
    writer.set("devices", .array(devices.map(\.json)))
    return writer.value
  }
}

/// The rolling budget of device changes.
public struct DeviceChangeBudget: Sendable, Hashable, JSONModel {
  /// Changes left in the window.
  public var remaining: Int
  /// Changes allowed per window.
  public var limit: Int
  /// The window's length in days.
  public var windowDays: Int
  /// Fields this build does not know, kept as the server sent them.
  package var unknownFields: [String: JSONValue]

  /// Creates a change budget.
  package init(
    remaining: Int, limit: Int, windowDays: Int, unknownFields: [String: JSONValue] = [:]
  ) {
    self.remaining = remaining
    self.limit = limit
    self.windowDays = windowDays
    self.unknownFields = unknownFields
  }

  init(json: JSONValue, path: String) throws(SnapshotError) {
    var reader = try JSONObjectReader(json, path: path)
    remaining = try reader.required("remaining", JSONField.count)
    limit = try reader.required("limit", JSONField.count)
    windowDays = try reader.required("windowDays", JSONField.count)
    unknownFields = reader.unknownFields
  }

  var json: JSONValue {
    var writer = JSONObjectWriter(unknownFields: unknownFields)
    writer.set("remaining", .integer(Int64(remaining)))
    writer.set("limit", .integer(Int64(limit)))
    writer.set("windowDays", .integer(Int64(windowDays)))
    return writer.value
  }
}

/// One of the customer's activations, as the server redacted it for display.
public struct DeviceSummary: Sendable, Hashable, JSONModel {
  /// A server-issued short identifier, not a hardware ID.
  public var id: String
  /// A display label, such as `iPhone`.
  public var label: String?
  /// When the server last saw the device.
  public var lastSeenAt: Date?
  /// Fields this build does not know, kept as the server sent them.
  package var unknownFields: [String: JSONValue]

  /// Creates a device summary.
  package init(
    id: String, label: String? = nil, lastSeenAt: Date? = nil,
    unknownFields: [String: JSONValue] = [:]
  ) {
    self.id = id
    self.label = label
    self.lastSeenAt = lastSeenAt
    self.unknownFields = unknownFields
  }

  init(json: JSONValue, path: String) throws(SnapshotError) {
    var reader = try JSONObjectReader(json, path: path)
    id = try reader.required("id", JSONField.string)
    label = try reader.optional("label", JSONField.string)
    lastSeenAt = try reader.optional("lastSeenAt", JSONField.date)
    unknownFields = reader.unknownFields
  }

  var json: JSONValue {
    var writer = JSONObjectWriter(unknownFields: unknownFields)
    writer.set("id", .string(id))
    writer.set("label", label.map(JSONValue.string))
    writer.set("lastSeenAt", lastSeenAt.map(JSONValue.init))
    return writer.value
  }
}

extension DeviceAccessInfo: CustomReflectable {
  /// Every field but the values of the unknown ones, which are listed by name only: the server
  /// may put a device token there, and tokens stay out of every output (<doc:SnapshotFormat>), so
  /// `dump`, a debugger and `String(describing:)` of a CustomerInfo never show one.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "status": status, "reason": reason as Any, "expiresAt": expiresAt as Any,
        "nextAllowedAt": nextAllowedAt as Any, "changeBudget": changeBudget as Any,
        "devices": devices, "unknownFields": unknownFields.keys.sorted(),
      ], displayStyle: .struct)
  }
}
