/// What ``EntitlementClient/syncPurchases()``, ``EntitlementClient/restorePurchases()`` and
/// ``EntitlementClient/purchaseCompleted(_:)`` found for the user current when the call began
/// (a purchase's observer), once the queue has drained and the refresh after it has ended.
///
/// It lists that user's entries only: entries other users observed are posted as them
/// meanwhile, and never shown here. If another user logs in during the call, what synced and
/// what is held in memory are still listed, so the app can finish or keep those store
/// transactions, but the lists an app shows a user (pending, conflicts, rejected, expired) are
/// left empty: they are the buyer's, for when the buyer is current again. Its ``state`` is the
/// user current when the call returns, what an app shows.
public struct PurchaseSyncResult: Sendable, Hashable {
  /// Entries that synced during this call.
  public var synced: [QueuedPurchase]
  /// Entries still to post: a transient failure backs them off, or they are being posted.
  public var pending: [QueuedPurchase]
  /// Every entry the server says another app user owns, with what to offer. Nothing was
  /// transferred, and nothing is reconciled under the call's user.
  public var conflicts: [QueuedPurchase]
  /// Every entry the server refused (a 4xx) that the queue still keeps.
  public var rejected: [QueuedPurchase]
  /// Every entry that expired, unsent 30 days after it was observed, that the queue
  /// still keeps: a purchase the server never saw, for support.
  public var expired: [QueuedPurchase]
  /// Transactions observed in this call that another user of this device observed first:
  /// they stay bound to that user and change nothing here.
  public var boundToAnotherUser: [String]
  /// The queue could not be read or written; what is listed is what was known before.
  public var storageError: CacheError?
  /// Transactions of the call's user observed while the cache's storage was unavailable (a
  /// device before its first unlock): the client holds them in memory and enqueues them as
  /// their observer once the storage opens. Do not finish them in the store yet: if the app
  /// ends first, the store delivers them again.
  public var heldInMemory: [String] = []
  /// The state of the user current when the call returns, after it all: another user's, with
  /// its own ``ClientState/appUserID``, if someone logged in during the call.
  public var state: ClientState

  /// Whether every listed entry is settled: none pending, none held in memory, and no
  /// conflict.
  public var isSettled: Bool { pending.isEmpty && conflicts.isEmpty && heldInMemory.isEmpty }
}

/// A change of a queued purchase's state, as ``EntitlementClient/purchaseUpdates`` tells it.
///
/// Every observer's changes are told, each with its observer's app-user ID, so an app shows a
/// user only the updates whose ``appUserID`` is theirs: the same UTF-8 bytes, as the cache
/// compares users (the scope a purchase is bound to says the same), not Swift's
/// `==`, which calls an ID equal to the same text in another Unicode form.
public struct PurchaseUpdate: Sendable, Hashable, CustomStringConvertible,
  CustomReflectable
{
  /// The raw app-user ID of the user who observed the purchase, which it is posted as.
  public var appUserID: String
  /// The entry after the change.
  public var purchase: QueuedPurchase

  /// The entry's description: never the app-user ID or the token.
  public var description: String { "PurchaseUpdate(\(purchase))" }

  /// The entry alone, so `dump` and debuggers show no app-user ID either.
  public var customMirror: Mirror {
    Mirror(
      self, children: ["appUserID": Redacted.placeholder, "purchase": purchase],
      displayStyle: .struct)
  }

}
