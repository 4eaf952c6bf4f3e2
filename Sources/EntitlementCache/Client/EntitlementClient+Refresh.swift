#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension EntitlementClient {
  /// How a wait for a flight ended.
  enum FlightWait: Sendable {
    case finished(RefreshOutcome?)
    case timedOut
    case cancelled
  }

  /// Starts a refresh of the current identity without waiting for it: nobody waits, so no
  /// task is started to wait.
  func launchRefresh(_ flow: RefreshFlow) {
    core.withLock { _ = joinOrStartFlight(&$0, flow: flow) }
  }

  /// Refreshes the current identity in `flow`, joining the flight in the air when the flow
  /// allows, and waits for it, at most `timeout` when given.
  ///
  /// On a timeout the failure is recorded (the cached state then reads `offline`) unless the
  /// answer is already being applied, or another flow stored an answer since the request
  /// left, and the flight goes on: its answer lands as `lateStored`. Nil when the client is
  /// stopped or the caller was cancelled.
  @discardableResult
  func refresh(_ flow: RefreshFlow, waitingAtMost timeout: Duration?) async -> RefreshOutcome? {
    let flight = core.withLock { joinOrStartFlight(&$0, flow: flow) }
    return await wait(for: flight, in: flow, atMost: timeout)
  }

  /// Waits for `flight`, joined in `flow` (see `refresh(_:waitingAtMost:)`).
  @discardableResult
  func wait(
    for flight: Flight?, in flow: RefreshFlow, atMost timeout: Duration?
  ) async -> RefreshOutcome? {
    guard let flight else { return nil }
    switch await wait(for: flight, atMost: timeout) {
    case .finished(let outcome):
      return outcome
    case .cancelled:
      return nil
    case .timedOut:
      let identity = flight.identity
      var recorded = false
      let abandoned = flight.abandon {
        ownWrite {
          writes.withLock { _ in
            // Not for a user logged out since: the record would bring back the removed scope.
            // Nor after another flow stored an answer since the request left: that answer is
            // newer than the timeout.
            guard !wasRemoved(identity.scope, after: flight.epoch),
              !core.withLock({ $0.isSuperseded(flight) })
            else { return }
            recorded = true
            try? cache.recordRefreshFailure(for: identity.scope, reason: "timeout")
          }
        }
      }
      guard abandoned else { return nil }
      // The diagnostic only for the wait that recorded the failure: a newer answer (or a
      // log-out) left nothing to tell, and a second waiter would tell it twice.
      report(
        RefreshReport(
          appUserID: identity.appUserID, scope: identity.scope, flow: flow, outcome: .timedOut),
        diagnosing: recorded)
      publish()
      return .timedOut
    }
  }

  /// Waits for `flight` to end, or `timeout` to pass, or the caller's task to be cancelled,
  /// whichever comes first.
  func wait(for flight: Flight, atMost timeout: Duration?) async -> FlightWait {
    let first = FirstEvent<FlightWait>()
    let timer: ClientTask? = timeout.flatMap { timeout in
      core.withLock { core in
        spawn(&core) { [runtime] in
          do { try await runtime.sleep(for: timeout) } catch { return }
          first.offer(.timedOut)
        }
      }
    }
    flight.whenFinished { outcome in
      if first.offer(.finished(outcome)) { timer?.cancel() }
    }
    return await withTaskCancellationHandler {
      await withCheckedContinuation { first.install($0) }
    } onCancel: {
      if first.offer(.cancelled) { timer?.cancel() }
    }
  }

  /// The flight a refresh in `flow` joins: the one in the air, or for flows that need a fetch
  /// started after them, the one queued behind it; a new one when there is none.
  func joinOrStartFlight(_ core: inout ClientCore, flow: RefreshFlow) -> Flight? {
    guard core.started, !core.stopped else { return nil }
    let identity = core.identity
    var flights = core.flights[identity.scope.key] ?? ScopeFlights()
    defer { core.flights[identity.scope.key] = flights }
    if let current = flights.current, !flow.needsFetchStartedAfterIt { return current }
    if let queued = flights.queued { return queued }
    let flight = Flight(identity: identity, epoch: core.epoch, flow: flow)
    if flights.current == nil {
      flights.current = flight
      launch(flight, &core)
    } else {
      flights.queued = flight
    }
    return flight
  }

  /// Runs `flight`: the background delay when the app is in the background, the fetch, and
  /// the answer applied under the scope the request captured.
  func launch(_ flight: Flight, _ core: inout ClientCore) {
    let jitter: Duration? =
      core.phase == .background
      ? .ceilingMilliseconds(configuration.backgroundJitter.seconds * runtime.randomFraction())
      : nil
    // The fetch and its deadline race; whichever claims first lands the flight. The flight's
    // task awaits the fetcher itself, so a fetcher that ignores cancellation can only delay
    // its own task's end, never the flight.
    let claim = FirstClaim()
    spawn(&core) { [self] in
      if let jitter, jitter > .zero {
        do { try await runtime.sleep(for: jitter) } catch { return land(flight, nil) }
      }
      // Before the deadline can land the flight, which removes the entry.
      self.core.withLock { core in
        core.storedAnswersWhenFetched[ObjectIdentifier(flight)] =
          core.storedAnswers[flight.identity.scope.key, default: 0]
      }
      let deadline = startDeadline(for: flight, claim)
      let request = FetchRequest(
        scope: flight.identity.scope, appUserID: flight.identity.appUserID,
        nonce: runtime.randomBytes(16), flow: flight.flow)
      let answer: Result<FetchedCustomerInfo, FetchFailure>
      do throws(FetchFailure) {
        answer = .success(try await fetcher.fetchCustomerInfo(request))
      } catch {
        answer = .failure(error)
      }
      guard claim.take() else { return }
      deadline?.cancel()
      complete(flight, with: answer, requestNonce: request.nonce)
    }
  }

  /// After ``ClientConfiguration/fetchTimeout``, lands `flight` as a transient failure unless
  /// its answer came first: a fetcher that never answers must not hold the scope's flight,
  /// which every later refresh of the scope would join.
  private func startDeadline(for flight: Flight, _ claim: FirstClaim) -> ClientTask? {
    guard let limit = configuration.fetchTimeout else { return nil }
    return core.withLock { core in
      spawn(&core) { [self] in
        do { try await runtime.sleep(for: limit) } catch { return }
        guard claim.take() else { return }
        complete(flight, with: .failure(.transient(status: nil)), requestNonce: nil)
      }
    }
  }

  /// Applies `answer` and lands `flight`. A stopped client is a killed process: whatever came
  /// back is lost; `stop()` marks the client stopped before it cancels anything.
  private func complete(
    _ flight: Flight, with answer: Result<FetchedCustomerInfo, FetchFailure>,
    requestNonce: [UInt8]?
  ) {
    guard !core.withLock({ $0.stopped }) else { return land(flight, nil) }
    let late = flight.beginApplying()
    let (outcome, superseded) = apply(answer, for: flight, requestNonce: requestNonce)
    let landed = late && outcome == .stored ? .lateStored : outcome
    // What the retry schedule follows. A failure superseded by an answer stored meanwhile was
    // not recorded and calls for no retry: that answer already cancelled the one pending. A
    // wait that timed out recorded a failure; an answer then found older than the stored
    // snapshot (another process's, written since the request left) leaves that record in
    // place, so the retry a failure calls for is still due.
    let retryingAfter: RefreshOutcome?
    if superseded {
      retryingAfter = nil
    } else if late, outcome == .discardedOlder {
      retryingAfter = .failed(.transient(status: nil))
    } else {
      retryingAfter = landed
    }
    land(flight, landed, retryingAfter: retryingAfter)
  }

  /// Whether `logOut` removed `scope` after a request made at `epoch`.
  func wasRemoved(_ scope: CacheScope, after epoch: UInt64) -> Bool {
    core.withLock { core in core.removedScopes[scope.key].map { $0 > epoch } ?? false }
  }

  /// Stores or records `answer` under the flight's scope (<doc:RefreshClient>), holding the
  /// write lock from the logged-out check to the write.
  ///
  /// - Returns: The outcome, and whether another flow stored an answer since the request left
  ///   (``ClientCore/isSuperseded(_:)``), decided once under the write lock: then a failure
  ///   of this flight was neither recorded nor is retried.
  private func apply(
    _ answer: Result<FetchedCustomerInfo, FetchFailure>, for flight: Flight,
    requestNonce: [UInt8]?
  ) -> (RefreshOutcome, superseded: Bool) {
    let applied = ownWrite {
      writes.withLock { _ in
        let superseded = core.withLock { $0.isSuperseded(flight) }
        let outcome = applyHoldingWriteLock(
          answer, for: flight, superseded: superseded, requestNonce: requestNonce)
        return (outcome, superseded)
      }
    }
    // The client leaves its own writes' signals to itself, and this one may be what opened
    // the storage: queue what was held meanwhile.
    drainHeldPurchasesIfDue()
    return applied
  }

  private func applyHoldingWriteLock(
    _ answer: Result<FetchedCustomerInfo, FetchFailure>, for flight: Flight, superseded: Bool,
    requestNonce: [UInt8]?
  ) -> RefreshOutcome {
    let scope = flight.identity.scope
    if wasRemoved(scope, after: flight.epoch) { return .discardedLoggedOut }
    switch answer {
    case .failure(let failure):
      // A fresh answer stored by another flow since this request left (a purchase post's,
      // say) is newer than this failure: marking the scope offline now would contradict it.
      if superseded { return .failed(failure) }
      do throws(CacheError) {
        try cache.recordRefreshFailure(for: scope, reason: failure.recordedReason)
        return .failed(failure)
      } catch {
        return .storageFailed(error)
      }
    case .success(let fetched):
      return storeAnswer(
        fetched, for: scope, requestNonce: requestNonce, recordingRefusals: !superseded)
    }
  }

  /// Stores a server's CustomerInfo under `scope`, with its signature and the nonce its
  /// request sent, through the cache's conditional store: an older `requestDate` is not
  /// stored, and a failed verification never replaces a verified snapshot, both decided by the
  /// cache inside its write (``CustomerInfoCache/storeAnswer(_:for:)``). A refused
  /// verification is recorded as a failed refresh. A stored answer, whatever flow brought it
  /// (a refresh, a purchase post), cancels the current user's pending retry: that retry
  /// failing would mark the scope offline seconds after a fresh answer. Called holding the
  /// write lock, as one of the client's own writes (``ownWrite(_:)``).
  ///
  /// - Parameter recordingRefusals: Whether an answer that does not parse, or fails
  ///   verification, is recorded as a failed refresh; false for a flight another flow's stored
  ///   answer superseded, whose refusal is older news than that answer.
  func storeAnswer(
    _ fetched: FetchedCustomerInfo, for scope: CacheScope, requestNonce: [UInt8]?,
    recordingRefusals: Bool = true
  ) -> RefreshOutcome {
    do throws(CacheError) {
      let snapshot: CustomerInfoSnapshot
      do {
        snapshot = try CustomerInfoSnapshot(
          jsonData: fetched.body, signature: fetched.signature, requestNonce: requestNonce)
      } catch {
        if recordingRefusals {
          try cache.recordRefreshFailure(for: scope, reason: "invalid_response")
        }
        return .invalidResponse
      }
      // Never backwards, decided by the cache inside its write (the one rule book).
      switch try cache.storeAnswer(snapshot, for: scope) {
      case .stored:
        core.withLock { core in
          core.storedAnswers[scope.key, default: 0] &+= 1
          if core.identity.scope == scope { core.retry.reset() }
        }
      case .discardedOlder:
        return .discardedOlder
      case .refusedUnverified(let reason):
        let recorded = reason.map { "verification_failed_\($0.rawValue)" } ?? "verification_failed"
        if recordingRefusals { try cache.recordRefreshFailure(for: scope, reason: recorded) }
        return .verificationFailed
      }
      return .stored
    } catch {
      return .storageFailed(error)
    }
  }

  /// Ends `flight`: reports it, starts the flight queued behind it, retries after a failure
  /// while its identity is current and the app in the foreground, and republishes.
  ///
  /// - Parameter retryingAfter: The outcome the retry schedule follows
  ///   (``scheduleRetry(_:after:)``); nil to leave it as it is.
  private func land(
    _ flight: Flight, _ outcome: RefreshOutcome?, retryingAfter: RefreshOutcome? = nil
  ) {
    var retryDelay: Duration?
    let dropped: Flight? = core.withLock { core in
      var dropped: Flight?
      let key = flight.identity.scope.key
      if var flights = core.flights[key], flights.current === flight {
        flights.current = flights.queued
        flights.queued = nil
        // A fetch queued for a user logged out since would send their ID to the server after
        // logout, for an answer that is dropped anyway.
        if let next = flights.current,
          core.removedScopes[key].map({ $0 > next.epoch }) ?? false
        {
          dropped = next
          flights.current = nil
        }
        core.flights[key] = flights.current == nil ? nil : flights
        if let next = flights.current { launch(next, &core) }
      }
      core.storedAnswersWhenFetched[ObjectIdentifier(flight)] = nil
      if let retryingAfter, core.identity.scope == flight.identity.scope {
        retryDelay = scheduleRetry(&core, after: retryingAfter)
      }
      return dropped
    }
    // The report first: a log of fetches and states then reads cause before effect.
    if let outcome {
      report(
        RefreshReport(
          appUserID: flight.identity.appUserID, scope: flight.identity.scope, flow: flight.flow,
          outcome: outcome))
    }
    if let retryDelay {
      tell(.retryScheduled(.refresh, after: retryDelay), scope: flight.identity.scope)
    }
    publish()
    flight.finish(outcome)
    dropped?.finish(.discardedLoggedOut)
  }

  /// After a failure, the next backed-off retry; after a success, none. A `rejected` answer
  /// (a 4xx) is not retried on a timer either: asking again in minutes gets the same answer,
  /// for as long as the app stays open. The next flow that refreshes asks again.
  ///
  /// - Returns: The delay of the retry this scheduled; nil when it scheduled none.
  func scheduleRetry(_ core: inout ClientCore, after outcome: RefreshOutcome) -> Duration? {
    switch outcome {
    case .stored, .lateStored, .discardedOlder, .failed(.rejected):
      core.retry.reset()
      return nil
    case .failed, .invalidResponse, .verificationFailed:
      guard core.retry.pending == nil else { return nil }
      let delay = core.retry.nextDelay(
        initial: configuration.retryInitialDelay, maximum: configuration.retryMaxDelay,
        randomFraction: runtime.randomFraction())
      core.retry.notBefore = cache.clock.now().addingTimeInterval(delay.seconds)
      guard core.phase == .foreground else { return nil }
      core.retry.token &+= 1
      let token = core.retry.token
      let epoch = core.epoch
      core.retry.pending = spawn(&core) { [weak self, runtime] in
        do { try await runtime.sleep(for: delay) } catch { return }
        guard let self else { return }
        // The sleep may have ended just before a move to the background, an identity change or
        // a newer retry: only the retry still scheduled, for the same user, in the foreground
        // may fetch, and it joins the flight in the same step.
        let flight: Flight? = self.core.withLock { core in
          guard core.retry.token == token, core.epoch == epoch, core.phase == .foreground
          else { return nil }
          core.retry.pending = nil
          return self.joinOrStartFlight(&core, flow: .retry)
        }
        if let flight { _ = await self.wait(for: flight, atMost: nil) }
      }
      return delay
    case .timedOut, .discardedLoggedOut, .storageFailed:
      return nil
    }
  }
}
