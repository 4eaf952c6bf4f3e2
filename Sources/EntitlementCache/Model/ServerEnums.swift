/// The status of an entitlement as the server reported it.
public enum EntitlementStatus: String, Sendable, Hashable, CaseIterable {
  /// Paid up; usable until `expiresAt`, if it has one.
  case active
  /// Billing failed but the store keeps access open until `gracePeriodExpiresAt`.
  case grace
  /// Billing failed and the store is retrying. No premium access: show billing recovery.
  case billingRetry = "billing_retry"
  /// Ended.
  case expired
  /// Taken back (refund, chargeback, support).
  case revoked
}

/// How the server verified the response that produced the snapshot.
public enum VerificationStatus: String, Sendable, Hashable, CaseIterable {
  /// Verification was not requested.
  case notRequested = "not_requested"
  /// The server's signature was checked.
  case verified
  /// Verified on the device against the store.
  case verifiedOnDevice = "verified_on_device"
  /// Verification failed.
  case failed
}

/// Where an entitlement's access comes from.
public enum EntitlementSource: String, Sendable, Hashable, CaseIterable {
  /// The app user's own purchase.
  case purchase
  /// Shared by a family member; excluded when the policy says so.
  case familyShared = "family_shared"
  /// Granted by the developer.
  case promotional
  /// Anything else the server reports.
  case other
}

/// Who owns a store purchase relative to the current app user.
public enum PurchaseOwnership: String, Sendable, Hashable, CaseIterable {
  /// Owned by the current app user.
  case owned
  /// Not attributed to any app user yet.
  case unclaimed
  /// Bound to another app user; never transferred silently.
  case otherUser = "other_user"
  /// Shared by a family member.
  case familyShared = "family_shared"
}

/// How a purchase came to the store account.
public enum OwnershipType: String, Sendable, Hashable, CaseIterable {
  /// Bought by this store account.
  case purchased
  /// Received through family sharing.
  case familyShared = "family_shared"
}

/// What the app should offer so an unclaimed purchase reaches the right user.
public enum ClaimHint: String, Sendable, Hashable, CaseIterable {
  /// Offer "Restore purchases".
  case restoreRequired = "restore_required"
  /// Offer to log in with the account that owns the purchase.
  case loginRequired = "login_required"
  /// Send the user to support.
  case supportRequired = "support_required"
}

/// Whether this installation may use the customer's access.
public enum DeviceAccessStatus: String, Sendable, Hashable, CaseIterable {
  /// This installation may use the customer's access until `expiresAt`.
  case active
  /// This installation may not use it; `reason` says why.
  case blocked
}

/// Why the server blocked this installation.
public enum DeviceBlockReason: String, Sendable, Hashable, CaseIterable {
  /// The user must pick an activation to replace, from the redacted device list.
  case deviceSelectionRequired = "DEVICE_SELECTION_REQUIRED"
  /// A replacement happened recently; wait until `nextAllowedAt`.
  case deviceReplacementCooldown = "DEVICE_REPLACEMENT_COOLDOWN"
  /// The rolling change budget is used up.
  case deviceChangeLimitReached = "DEVICE_CHANGE_LIMIT_REACHED"
  /// Another installation superseded this one.
  case deviceReplaced = "DEVICE_REPLACED"
  /// The user must log in again.
  case loginRequired = "LOGIN_REQUIRED"
  /// The purchase's beneficiary is another user; needs account or support recovery.
  case beneficiaryConflict = "BENEFICIARY_CONFLICT"
}
