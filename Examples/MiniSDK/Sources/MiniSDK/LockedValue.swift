import Foundation

/// A value reachable only while an `NSLock` is held: the SDK's lock, and its tests'.
///
/// `Synchronization.Mutex` would hold the SDK to iOS 18 and macOS 15, above the floor it shares
/// with EntitlementCache. `@unchecked Sendable` is sound because `value` is private and read or
/// written only inside `withLock`, while `lock` is held, through a closure that cannot escape.
final class LockedValue<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) {
    self.value = value
  }

  /// Runs `body` with exclusive access to the value.
  func withLock<Result, Failure: Error>(
    _ body: (inout Value) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}
