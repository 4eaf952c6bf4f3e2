extension SQLiteCustomerInfoCache: CustomerInfoChangeSignaling {
  /// This instance's writes, and the change check's answer (the writer's `data_version`),
  /// which moves with every commit of another connection (another instance, another process)
  /// and ignores this one's own: one statement step, no read of any row. The same check a
  /// read makes, asked now whether or not one is due, so memory drops what another process
  /// wrote over before the client reads. Nil while this instance is writing (its writer is
  /// busy), while it waits for its file, and once it is closed. A cache waiting for its file
  /// tries to open it here too, at most every two seconds, so a client's periodic check
  /// notices the device's unlock.
  public func changeMark() -> UInt64? {
    openAwaitedStorage(waitingForWrites: false)
    let own = committedWrites.withLock { $0 }
    guard let asked = checkForOtherWrites(), let external = asked.dataVersion else { return nil }
    let serial = asked.writer
    // What memory holds must answer for the version this mark names: a reader told of another
    // connection's write drops what it wrote over, rather than waiting for the read's own
    // check. Asked before the reads lock, as every check is.
    reads.withLock { $0.observe(dataVersion: external, writerSerial: serial) }
    return UInt64(truncatingIfNeeded: external) << 32 | own & 0xFFFF_FFFF
  }

  /// Calls `observer` after every write through this instance: a snapshot stored, a failed
  /// refresh recorded, a removal, a purchase queued or changed. A flush of read marks changes
  /// nothing a read answers, and calls nothing.
  public func observeWrites(_ observer: @escaping @Sendable () -> Void) -> WriteObservation {
    writeObservers.add(observer)
  }
}

extension SQLiteCustomerInfoCache {
  /// The change check, due or not: the one way this cache learns of another connection's
  /// write, for its reads (at most once per ``CacheConfiguration/changeCheckInterval``, through
  /// ``otherConnectionsVersion()``) and for ``changeMark()``, which a client's periodic check
  /// asks. Asks the store's writer for its `data_version` with the serial of the writer asked:
  /// nil when a write holds the writer right now (the next check asks), the storage refuses it
  /// for now, or the cache is closed; a nil `dataVersion` when the file could not be asked,
  /// which trusts nothing resident.
  ///
  /// The writer is asked because its `data_version` ignores this cache's own commits, whose
  /// results are already installed in memory. It is asked before the read takes the reads
  /// lock, never while holding it: that is the lock order.
  func checkForOtherWrites() -> (dataVersion: Int64?, writer: UInt64)? {
    let asked = writer.withLockIfAvailable { store -> (Int64?, UInt64)? in
      guard let store else { return nil }
      do throws(SQLiteError) {
        return (try store.dataVersion(), store.serial)
      } catch let error where error.storageFailureKind == .unavailable {
        // Refused, as a locked device refuses: nothing says the file changed, so what memory
        // holds still answers; the next check asks again.
        return nil
      } catch {
        return (nil, store.serial)
      }
    }
    // Busy or not, the attempt counts: retrying on every read while a write holds the lock
    // would cost each read a failed try-lock, a system call, for as long as the write lasts. The
    // write is this cache's own, whose result memory holds; another process's commit meanwhile
    // is seen at the next check, one interval later.
    watch.checked()
    guard let asked, let answer = asked else { return nil }
    return answer
  }

  /// ``checkForOtherWrites()`` when one is due; nil otherwise.
  func otherConnectionsVersion() -> (dataVersion: Int64?, writer: UInt64)? {
    guard watch.isDue else { return nil }
    return checkForOtherWrites()
  }
}
