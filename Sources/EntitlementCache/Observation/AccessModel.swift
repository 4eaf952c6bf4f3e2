#if canImport(Observation)
  import Observation

  /// The current user's access as a SwiftUI view reads it: an `@Observable` model on the main
  /// actor, kept current by an ``EntitlementClient``.
  ///
  /// It follows the client's ``EntitlementClient/updates`` stream and changes once per state the
  /// client publishes, so a view that reads `model["pro"]` is invalidated when that state
  /// changes, and not at every read of the cache. It holds the decisions of the keys the client
  /// watches (``ClientConfiguration/watchedEntitlements``: list the keys your views read
  /// there) and of every entitlement the cached snapshot names, how fresh the snapshot is, and
  /// whether a purchase is still processing.
  ///
  /// Create it once, where the client lives, and hand it to the views that read it:
  ///
  /// ```swift
  /// @main struct MyApp: App {
  ///   @State private var access = AccessModel(client: SDK.shared.client)
  ///   var body: some Scene {
  ///     WindowGroup { ContentView().environment(access) }
  ///   }
  /// }
  ///
  /// struct ContentView: View {
  ///   @Environment(AccessModel.self) private var access
  ///   var body: some View {
  ///     if access.isGranted("pro") { ProFeature() } else { Paywall() }
  ///   }
  /// }
  /// ```
  ///
  /// See <doc:SwiftUI> for a view that says "purchase processing" and "offline, will retry",
  /// and for a widget reading the app's file.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
  @MainActor
  @Observable
  public final class AccessModel {
    /// The state the client published last; nil until its first publish, which
    /// ``EntitlementClient/start(in:)`` makes before any network call.
    public var state: ClientState? { published }

    /// What ``state`` reads. Observation makes a stored property a computed one with a setter,
    /// which the documentation showed as `{ get set }` even when private: the public property
    /// is read-only, and reading it is tracked through this one.
    private var published: ClientState?

    /// Follows `client` until the model is released or the client stops. A client already
    /// started gives its state at once, so the first frame shows what the cache knows.
    public init(client: EntitlementClient) {
      published = client.currentState
      let updates = client.updates
      following.start { [weak self] in
        for await state in updates {
          // One assignment per state published: one change for every view that reads it.
          self?.published = state
        }
      }
    }

    /// The task that follows the stream, cancelled when the model is released, so the stream's
    /// subscription ends with it.
    @ObservationIgnored private let following = FollowingTask()

    /// The app-user ID the state is for; nil before the first publish.
    public var appUserID: String? { state?.appUserID }

    /// The decision for `entitlement` when the client watches it or the cached snapshot names
    /// it; nil before the first publish, and for a key neither does (which the snapshot then
    /// does not entitle: watch it to get its decision, with the reason).
    public subscript(entitlement: String) -> AccessDecision? {
      state?.decisions[entitlement] ?? state?.customerInfo?.decisions[entitlement]
    }

    /// Whether `entitlement` is usable now. False before the first publish and for a key the
    /// client does not watch: gate on it, and the feature stays closed until the cache has
    /// answered.
    public func isGranted(_ entitlement: String) -> Bool {
      self[entitlement]?.isGranted ?? false
    }

    /// How current the cached snapshot is; nil when nothing is cached.
    package var freshness: Freshness? { state?.customerInfo?.freshness }

    /// Whether the state is served from cache after a refresh failed: the client retries in
    /// the foreground with backoff, so a view may say "offline, will retry".
    public var isOffline: Bool { freshness == .offline }

    /// Whether a purchase of the current user is queued and not yet confirmed by the server:
    /// a denial then reads "purchase processing", never "buy".
    public var isPurchaseProcessing: Bool {
      guard let state else { return false }
      let pending = { (decision: AccessDecision) in decision.evidence.pendingPurchase }
      return state.decisions.values.contains(where: pending)
        || state.customerInfo?.decisions.values.contains(where: pending) == true
    }
  }

  /// A main-actor task that is cancelled when its owner releases it: a `deinit` of the model
  /// itself could not reach a main-actor property on older systems.
  final class FollowingTask: Sendable {
    private let task = Locked<Task<Void, Never>?>(nil)

    @MainActor func start(_ body: @escaping @MainActor () async -> Void) {
      let started = Task { @MainActor in await body() }
      task.withLock { $0 = started }
    }

    deinit {
      task.withLock { $0?.cancel() }
    }
  }
#endif
