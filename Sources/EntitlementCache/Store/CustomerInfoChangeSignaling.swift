/// A cache that can say, for the cost of one check, whether anything it holds may have
/// changed.
///
/// The refresh client looks at ``changeMark()`` at every cross-process check while the app is
/// in the foreground (``ClientConfiguration/crossProcessCheckInterval``), and reads the cache
/// again only when the mark moved, so an idle client reads and parses nothing. A cache that does
/// not adopt this protocol is read at every check instead, as before. Both caches of the
/// package adopt it; a cache of an SDK's own may, and the conformance kit's round-trip clause
/// checks the mark of a cache that does.
public protocol CustomerInfoChangeSignaling: CustomerInfoCache {
  /// A value that moves whenever anything stored may have changed since it was last returned:
  /// a write by this instance (a snapshot, a failed refresh, a removal, a queued purchase), or
  /// by another instance or process sharing the storage. Reads never move it.
  ///
  /// - Returns: The mark, or nil when the cache cannot tell right now (the caller then reads).
  func changeMark() -> UInt64?
}
