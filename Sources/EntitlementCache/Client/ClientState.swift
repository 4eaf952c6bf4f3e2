/// What the client publishes: the current identity's cached state, re-evaluated.
public struct ClientState: Sendable, Hashable, CustomStringConvertible,
  CustomReflectable
{
  /// The app-user ID the state is for.
  public var appUserID: String
  /// The cached CustomerInfo re-evaluated now; nil when nothing is cached (or it cannot be
  /// read: the decisions then say `offlineUnavailable`).
  public var customerInfo: EvaluatedCustomerInfo?
  /// The decision for every watched entitlement: ``ClientConfiguration/watchedEntitlements``
  /// and the keys of live ``EntitlementClient/accessUpdates(to:)`` streams.
  public var decisions: [String: AccessDecision]

  /// The decision for `entitlement` when it is watched.
  public func access(to entitlement: String) -> AccessDecision? {
    decisions[entitlement]
  }

  /// The keys usable now, offline included.
  package var activeEntitlementKeys: Set<String> {
    customerInfo?.activeEntitlementKeys ?? []
  }

  /// Counts and states only: never the app-user ID.
  public var description: String {
    let states = decisions.keys.sorted().compactMap { key in
      decisions[key].map { "\(key): \($0.state)" }
    }
    let cached = customerInfo == nil ? "nothing cached" : "cached"
    return "ClientState(\(([cached] + states).joined(separator: ", ")))"
  }

  /// The cached CustomerInfo and the decisions, with the app-user ID redacted, so `dump` and
  /// debuggers show no app-user ID either.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "appUserID": Redacted.placeholder, "customerInfo": customerInfo as Any,
        "decisions": decisions,
      ], displayStyle: .struct)
  }

  /// Whether the device clock was found set back: the CustomerInfo's evidence, or with none
  /// stored, any decision's.
  var clockRollbackSuspected: Bool {
    customerInfo?.clockRollbackSuspected
      ?? decisions.values.contains { $0.evidence.clockRollbackSuspected }
  }

  /// Whether the two are the same state for the same user: app-user IDs are compared by their
  /// bytes, as the cache's scopes are, so a state of `é` is never equal to one of `e` and a
  /// combining accent.
  public static func == (lhs: ClientState, rhs: ClientState) -> Bool {
    lhs.appUserID.namesSameUser(as: rhs.appUserID) && lhs.customerInfo == rhs.customerInfo
      && lhs.decisions == rhs.decisions
  }

  /// Whether `other` says the same to the app. Every read moves the clock estimate and the
  /// high-water mark; only what they decide counts, so a stream never repeats a state.
  func saysTheSame(as other: ClientState) -> Bool {
    appUserID.namesSameUser(as: other.appUserID) && decisions.count == other.decisions.count
      && decisions.allSatisfy { key, decision in
        other.decisions[key].map { $0.saysTheSame(as: decision) } ?? false
      }
      && customerInfo?.comparable == other.customerInfo?.comparable
  }
}

extension AccessDecision {
  /// Whether `other` decides the same with the same evidence, read at any instant.
  func saysTheSame(as other: AccessDecision) -> Bool {
    var this = self
    var that = other
    this.evidence.estimatedServerTime = nil
    that.evidence.estimatedServerTime = nil
    return this == that
  }
}

extension EvaluatedCustomerInfo {
  /// The evaluation without what moves on every read.
  fileprivate var comparable: EvaluatedCustomerInfo {
    var copy = self
    copy.estimatedServerTime = .distantPast
    copy.timeToNextBoundary = nil
    // When the last attempt failed and why is bookkeeping for support; the freshness (offline)
    // and the decisions say what the app shows, so a retry failing again is no new state.
    copy.bookkeeping.deviceHighWaterMark = .distantPast
    copy.bookkeeping.lastRefreshAttemptAt = nil
    copy.bookkeeping.lastRefreshFailedAt = nil
    copy.bookkeeping.lastRefreshFailureReason = nil
    copy.decisions = decisions.mapValues { decision in
      var decision = decision
      decision.evidence.estimatedServerTime = nil
      return decision
    }
    return copy
  }
}

/// One delivery of ``EntitlementClient/accessUpdates(to:)``: a decision and the user it is for.
public struct AccessUpdate: Sendable, Hashable, CustomStringConvertible,
  CustomReflectable
{
  /// The app-user ID the decision is for: the identity current when it was published.
  public var appUserID: String
  /// The decision for the stream's entitlement.
  public var decision: AccessDecision

  /// Whether the two are the same decision for the same user, app-user IDs compared by their
  /// bytes as ``ClientState``'s are.
  public static func == (lhs: AccessUpdate, rhs: AccessUpdate) -> Bool {
    lhs.appUserID.namesSameUser(as: rhs.appUserID) && lhs.decision == rhs.decision
  }

  /// `AccessUpdate(granted)`: the decision's state, never the app-user ID.
  public var description: String { "AccessUpdate(\(decision.state))" }

  /// The decision, with the app-user ID redacted.
  public var customMirror: Mirror {
    Mirror(
      self, children: ["appUserID": Redacted.placeholder, "decision": decision],
      displayStyle: .struct)
  }
}
