import EntitlementCache
import EntitlementCacheTesting

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The device of one run: the virtual clocks, the server, the app running on them, and the log.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class SimulatedDevice: Sendable {
  /// The app as one process sees it: its cache and its client. A relaunch replaces both.
  struct App: Sendable {
    let cache: SQLiteCustomerInfoCache
    let client: EntitlementClient
    /// Cleared when the app ends (a relaunch, the end of the run): what its cache and client
    /// tell afterwards (a step that was waiting reading the closed cache) is not printed, as a
    /// killed process prints nothing.
    let running: Running
  }

  /// Whether one launch of the app is still running.
  final class Running: Sendable {
    private let flag = Locked(true)
    var isRunning: Bool { flag.withLock { $0 } }
    func end() { flag.withLock { $0 = false } }
  }

  private struct State {
    var app: App?
    /// Steps started and not yet returned.
    var waitingSteps = 0
    var failure: CLIError?
  }

  let script: SimulationScript
  let path: String
  let runtime: SimulatedRuntime
  /// The simulation's server keys, when the script's answers are signed.
  let signer: SimulationSigner?
  let server: ScriptedServer
  /// The device's lock screen, in a run whose script locks it; nil otherwise, and the file is
  /// opened through the platform's own VFS.
  let deviceLock: DeviceLock?
  let log: EventLog
  let recorders = ImmediateExecutor()
  private let state = Locked(State())
  private let start: Int64

  init(script: SimulationScript, path: String) throws(CLIError) {
    self.script = script
    self.path = path
    let runtime = SimulatedRuntime(
      start: script.start, bootSession: SimulationRunner.bootSession())
    // The script's start parsed, so it is within the years the output writes.
    let start = SimulationTime.milliseconds(script.start) ?? 0
    self.runtime = runtime
    self.start = start
    signer = script.signed ? try SimulationSigner() : nil
    server = ScriptedServer(
      answers: script.server, posts: script.posts, runtime: runtime, start: start, signer: signer,
      identity: script.identity)
    log = EventLog(now: { start + SimulationTime.milliseconds(runtime.elapsed) })
    deviceLock = script.locksDevice ? try DeviceLock() : nil
    let identity: ClientIdentity
    do {
      identity = try ClientIdentity(
        sdkKey: script.identity.sdkKey, installationID: script.identity.installation,
        environment: script.identity.environment, appUserID: script.identity.user)
    } catch {
      // The parser rejects empty parts, the only thing a scope refuses.
      throw CLIError.usage("identity: \(error)")
    }
    if script.startsLocked {
      // Locked, every file is refused alike: a file the run could never use (a damaged one,
      // another program's, one this user may not open) would pass for a locked one. Opened
      // once unlocked first, it is refused as an unlocked run refuses it.
      close(try openCache(onDiagnostic: { _ in }))
      if let failure { throw failure }
      deviceLock?.lock()
    }
    let app = try launch(identity)
    state.withLock { $0.app = app }
  }

  func run() -> SimulationRunner.Outcome {
    var stepsRun = 0
    for (index, step) in script.steps.enumerated() {
      // A failure ends the run where it happened: the clock does not move on to the next
      // step's time, whose timers would print events after it.
      guard failure == nil else { break }
      runtime.advance(by: step.at - runtime.elapsed)
      guard failure == nil else { break }
      log.begin(step: index)
      stepsRun = index + 1
      state.withLock { $0.waitingSteps += 1 }
      runtime.spawn { [self] in
        await perform(step.action)
        state.withLock { $0.waitingSteps -= 1 }
      }
      runtime.runUntilIdle()
    }
    // An answer on its way (or a step waiting for one, in its background delay) still lands
    // and is printed; timers with nothing in flight (boundaries, retries) are left unrun.
    while failure == nil, server.answersInFlight > 0 || waitingSteps > 0,
      let next = runtime.pendingWaits.first
    {
      runtime.advance(by: next)
    }
    let app = state.withLock { state in
      defer { state.app = nil }
      return state.app
    }
    if let app {
      app.running.end()
      app.client.stop()
      runtime.runUntilIdle()
      close(app.cache)
    }
    return SimulationRunner.Outcome(events: log.events, failure: failure, stepsRun: stepsRun)
  }

  private var failure: CLIError? { state.withLock { $0.failure } }
  private var waitingSteps: Int { state.withLock { $0.waitingSteps } }

  private func fail(_ error: CLIError) {
    state.withLock { state in
      if state.failure == nil { state.failure = error }
    }
  }

  /// Ends the run for a storage failure, unless it is the file refused while the script keeps
  /// the device locked: what the app meets then, and what the run is there to show.
  private func failUnlessLocked(_ error: CacheError) {
    if isRefusedWhileLocked(error) { return }
    fail(CLIError(error, path: path))
  }

  private func isRefusedWhileLocked(_ error: CacheError) -> Bool {
    guard let deviceLock, deviceLock.isLocked else { return false }
    if case .storage(_, let failure) = error, failure.kind == .unavailable { return true }
    return false
  }

  // MARK: Steps

  private func perform(_ action: ScriptAction) async {
    guard let client = state.withLock({ $0.app?.client }) else { return }
    switch action {
    case .start(let phase, _):
      client.start(in: phase)
    case .foreground:
      client.didEnterForeground()
    case .background:
      client.didEnterBackground()
    case .logIn(let user):
      // The parser rejects an empty user, the only ID a log-in refuses.
      _ = try? await client.logIn(user)
    case .logOut:
      do {
        _ = try await client.logOut(to: SimulationScript.anonymousUser)
      } catch {
        // The log-out did not happen (the previous user's snapshot could not be removed, the
        // device locked or not): the run stops here rather than go on as the same user.
        fail(CLIError(error, path: path))
      }
    case .refresh(nil):
      _ = await client.refresh()
    case .refresh(let policy?):
      _ = await client.state(fetchPolicy: policy)
    case .purchase(let transaction, let product):
      // The store's token is made up: the simulation never prints it, as nothing does.
      let purchase = ObservedPurchase(
        transactionID: transaction, productID: product,
        token: PurchaseToken(Data("simulated-store-token-\(transaction)".utf8)))
      do {
        let result = try await client.purchaseCompleted(purchase)
        if result.boundToAnotherUser.contains(transaction) {
          log.record(
            user: client.identity.appUserID,
            .purchaseBoundToAnotherUser(transaction: transaction))
        }
      } catch {
        failUnlessLocked(error)
      }
    case .restore:
      _ = await client.restorePurchases()
    case .sync:
      _ = await client.syncPurchases()
    case .networkAvailable:
      client.networkAvailable()
    case .relaunch(let phase, let locked):
      relaunch(in: phase, locked: locked)
    case .unlock:
      deviceLock?.unlock()
      // What an app does on UIKit's protectedDataDidBecomeAvailableNotification.
      state.withLock { $0.app?.cache }?.protectedDataDidBecomeAvailable()
    case .check(let entitlement):
      log.record(user: client.identity.appUserID, .check(client.access(to: entitlement)))
    case .setClock(let date):
      runtime.manualClock.set(date)
    }
  }

  /// Kills the app and launches it again on the same file, as the same user: the client is
  /// stopped (its fetches in flight are lost, as in a kill), the cache closed, and a new cache
  /// and client opened, subscribed to and started in `phase`. `locked`: the device restarted
  /// meanwhile, so the boot clock starts again in a new session and the file is refused until
  /// unlocked.
  private func relaunch(in phase: AppPhase, locked: Bool) {
    guard let old = state.withLock({ $0.app }) else { return }
    let identity = old.client.identity
    old.running.end()
    old.client.stop()
    close(old.cache)
    if locked {
      runtime.manualClock.reboot(session: SimulationRunner.bootSession())
      deviceLock?.lock()
    }
    do {
      let app = try launch(identity)
      state.withLock { $0.app = app }
      app.client.start(in: phase)
    } catch {
      state.withLock { $0.app = nil }
      fail(error)
    }
  }

  // MARK: The app

  /// Opens the cache and a client on it for `identity`, and subscribes the log to both of the
  /// client's streams before anything can be published.
  private func launch(_ identity: ClientIdentity) throws(CLIError) -> App {
    let log = self.log
    let labels = userLabels()
    let running = Running()
    // Recorded as told, on the thread that told it: a diagnostic lands in the log in the order
    // it happened, and names a user only by the script's label.
    let recordDiagnostic: DiagnosticHandler = { diagnostic in
      guard running.isRunning else { return }
      log.record(user: diagnostic.scope.flatMap { labels[$0.key] }, .diagnostic(diagnostic))
    }
    let cache = try openCache(onDiagnostic: recordDiagnostic)
    var configuration = ClientConfiguration()
    configuration.watchedEntitlements = script.watched
    // One process owns the file, so there is no other writer to look for; polling for one
    // every second would wake the virtual clock 86,400 times a simulated day.
    configuration.changeCheckInterval = nil
    configuration.onDiagnostic = recordDiagnostic
    let client: EntitlementClient
    do {
      client = try EntitlementClient(
        cache: cache, fetcher: server, identity: identity, configuration: configuration,
        runtime: runtime, poster: server)
    } catch {
      throw CLIError(error, path: path)
    }
    let updates = client.updates
    let reports = client.refreshReports
    let purchases = client.purchaseUpdates
    Task(executorPreference: recorders) {
      for await state in updates {
        log.record(user: state.appUserID, .update(decisions: state.decisions))
      }
    }
    Task(executorPreference: recorders) { [self] in
      for await report in reports {
        let requestedAt =
          report.outcome == .timedOut ? nil : server.takeArrival(ofFetchFor: report.appUserID)
        log.record(
          user: report.appUserID,
          .fetch(flow: report.flow, outcome: report.outcome, requestedAt: requestedAt))
        // The file took no answer: the run stops here, as for a purchase it could not store,
        // and the error is said once (the fetch line names only the outcome, as in JSON).
        if case .storageFailed(let error) = report.outcome { failUnlessLocked(error) }
      }
    }
    Task(executorPreference: recorders) {
      for await update in purchases {
        log.record(user: update.appUserID, .purchase(update.purchase))
      }
    }
    return App(cache: cache, client: client, running: running)
  }

  /// Opens the run's cache file through the device's VFS, telling `onDiagnostic` what it
  /// notices.
  ///
  /// - Throws: ``CLIError`` for a file that is not a usable database, or that cannot be opened
  ///   while the device is unlocked.
  private func openCache(
    onDiagnostic: @escaping DiagnosticHandler
  ) throws(CLIError) -> SQLiteCustomerInfoCache {
    var configuration = CacheConfiguration()
    configuration.policy = script.policy
    configuration.trustRoots = signer?.roots
    configuration.onDiagnostic = onDiagnostic
    // A script may come from someone else, and its `db` names any path: a file there that is
    // not a usable database is refused and left as it is, never moved aside and replaced.
    configuration.damageHandling = .fail
    configuration.vfsName = deviceLock?.name
    let cache: SQLiteCustomerInfoCache
    do {
      cache = try SQLiteCustomerInfoCache(
        path: path, configuration: configuration, clock: runtime.clock)
    } catch {
      throw CLIError(error, path: path)
    }
    // An app waits for a file it cannot open yet; a replay on one would show only the waiting,
    // whatever the script holds. Refused as every command refuses it (exit 3), before any step.
    // A script that locks the device means the waiting, until its `unlock`.
    if deviceLock?.isLocked != true, let error = cache.awaitedStorageError(.open) {
      throw CLIError(error, path: path)
    }
    return cache
  }

  /// The label of every user the script names (its identity, the server's users and those it
  /// logs in), by scope: a diagnostic names its scope, and the output names the label.
  private func userLabels() -> [ScopeKey: String] {
    // A list, not a set: a set keeps one of two IDs that differ only in Unicode form, and the
    // other's events would print with no user. The scope keys tell them apart.
    var users: [String] = [script.identity.user]
    users += script.server.keys
    users += script.posts.keys
    for step in script.steps {
      if case .logIn(let user) = step.action { users.append(user) }
    }
    var labels: [ScopeKey: String] = [:]
    for user in users {
      guard
        let scope = try? CacheScope(
          sdkKey: script.identity.sdkKey, installationID: script.identity.installation,
          environment: script.identity.environment, appUserID: user)
      else { continue }
      labels[scope.key] = user
    }
    return labels
  }

  private func close(_ cache: SQLiteCustomerInfoCache) {
    do {
      try cache.close()
    } catch {
      fail(CLIError(error, path: path))
    }
  }
}
