import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A `simulate` script, parsed and checked (`entitlement-cache simulate`, <doc:CommandLineTool>):
/// who the app is, what the server answers, and what happens when.
package struct SimulationScript: Sendable {
  /// The true time when the simulation starts: every `+DURATION` counts from it.
  var start: Date
  /// The cache file to start from and keep; nil for a throw-away database.
  var database: String?
  /// The offline policy the cache and the client read with.
  var policy: OfflinePolicy
  /// The entitlement keys every published state decides (`watch`).
  var watched: Set<String>
  /// The app, and the label of the user it starts as.
  var identity: Identity
  /// Each user label's answers, in the order fetches take them.
  var server: [String: [ScriptedAnswer]]
  /// Each user label's answers to purchase posts, in the order posts take them: the answers
  /// of `server` with a `post` field.
  var posts: [String: [ScriptedPostAnswer]]
  /// The steps, in time order.
  var steps: [ScriptStep]
  /// Whether the server signs its answers and the cache pins the simulation's test root
  /// (`"signed": true`): each answer's `signature` then says how it is signed.
  var signed = false

  /// The app's identity. The user label is the raw app-user ID the client sends.
  struct Identity: Sendable {
    var sdkKey: String
    var installation: String
    var environment: StoreEnvironment
    var user: String
  }

  /// The user label the client switches to on `logOut`, whose answers the server gives under
  /// this key.
  static let anonymousUser = "anonymous"

  /// Whether a step locks the device (a `start` or `relaunch` with `"locked": true`): the run
  /// then opens its file through a ``DeviceLock``.
  var locksDevice: Bool {
    steps.contains { step in
      switch step.action {
      case .start(_, locked: true), .relaunch(_, locked: true): true
      default: false
      }
    }
  }

  /// Whether the app's first launch is a locked `start`: the file is opened before the first
  /// step, so the device is locked from the run's start. A locked `relaunch` restarts a device
  /// that was unlocked until then, even as the first launch step.
  var startsLocked: Bool {
    if case .start(_, locked: true)? = steps.first(where: \.isStart)?.action { return true }
    return false
  }
}

/// One answer of the scripted server to one fetch.
struct ScriptedAnswer: Sendable {
  /// What the server sends.
  enum Reply: Sendable {
    /// A CustomerInfo snapshot: its JSON object, sent as written, with `requestDate` set to
    /// the time the request arrived when the script leaves it out.
    case snapshot([String: JSONValue])
    /// A failure, as the SDK's network layer reports it.
    case failure(FetchFailure)
  }

  var reply: Reply
  /// How long after the request arrived the answer comes back, on the virtual clock.
  var latency: Duration
  /// How a snapshot is signed, in a script whose answers are signed.
  var signature = ScriptedSignature.valid
}

/// One answer of the scripted server to one purchase post.
struct ScriptedPostAnswer: Sendable {
  /// What the server says.
  enum Reply: Sendable {
    /// Attributed to the poster, with the CustomerInfo that follows when the script gives one.
    case synced([String: JSONValue]?)
    /// Owned by another app user.
    case conflict(ClaimHint)
    /// A failure: `transient` or `rejected` with its status.
    case failure(FetchFailure)
  }

  var reply: Reply
  /// How long after the post arrived the answer comes back, on the virtual clock.
  var latency: Duration
}

/// One step of a script: an action at an instant.
struct ScriptStep: Sendable {
  /// When the step happens, as virtual time since the start.
  var at: Duration
  var action: ScriptAction

  /// Whether the step launches the app: a start, or a relaunch, which starts the app again.
  var isStart: Bool {
    switch action {
    case .start, .relaunch: true
    default: false
    }
  }
}

/// What a step does to the app; each is one call on the client, or on the simulated device.
enum ScriptAction: Sendable {
  /// `start(in:)`: a launch in the foreground, or in the background (a background fetch);
  /// `locked` when the device has not been unlocked since it started, so the cache's file is
  /// refused until an `unlock` step.
  case start(AppPhase, locked: Bool)
  /// `didEnterForeground()`.
  case foreground
  /// `didEnterBackground()`.
  case background
  /// `logIn(user)`.
  case logIn(user: String)
  /// `logOut(to: "anonymous")`.
  case logOut
  /// `state(fetchPolicy:)`, or `refresh()` without a policy.
  case refresh(FetchPolicy?)
  /// `purchaseCompleted(_:)`: the purchase is enqueued under the current user and posted.
  case purchase(transaction: String, product: String)
  /// `restorePurchases()`.
  case restore
  /// `syncPurchases()`.
  case sync
  /// `networkAvailable()`.
  case networkAvailable
  /// The process is killed and the app launched again on the same file, in the foreground or
  /// in the background; `locked` when the device restarted meanwhile (a new boot session) and
  /// is not unlocked yet.
  case relaunch(AppPhase, locked: Bool)
  /// The device's first unlock since it started: the app calls
  /// `protectedDataDidBecomeAvailable()`, and the file opens.
  case unlock
  /// The cache-only decision for one entitlement (no network).
  case check(entitlement: String)
  /// A person or a time server sets the device's wall clock; true time and the boot clock do
  /// not move.
  case setClock(to: Date)

  /// Each action's name in a script, and the fields it takes besides `at` and `do`.
  static let fields: KeyValuePairs<String, [String]> = [
    "start": ["in", "locked"], "foreground": [], "background": [], "logIn": ["user"],
    "logOut": [], "refresh": ["policy", "timeout"], "purchase": ["transaction", "product"],
    "restore": [], "sync": [], "networkAvailable": [], "relaunch": ["in", "locked"],
    "check": ["entitlement"], "setClock": ["to"], "unlock": [],
  ]
}
