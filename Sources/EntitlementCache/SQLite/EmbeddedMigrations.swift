// Generated from Migrations/*.sql by scripts/generate-migrations.sh. Do not edit: change
// the .sql files and run the script; MigrationSourceTests fails while the two differ.

enum EmbeddedMigrations {
  static let all: [Migration] = [
    Migration(
      version: 1,
      name: "scoped_snapshots",
      sql: ##"""
        -- One row per scope. A scope is known only by hashes: the raw SDK key, installation ID and
        -- app-user ID never reach this file (see Sources/EntitlementCache/Scope/CacheScope.swift for the hash construction).
        -- Times are integer milliseconds since the Unix epoch.
        CREATE TABLE scope (
          id INTEGER PRIMARY KEY,
          scope_key BLOB NOT NULL UNIQUE CHECK (length(scope_key) = 32),
          sdk_key_hash BLOB NOT NULL CHECK (length(sdk_key_hash) = 32),
          user_hash BLOB NOT NULL CHECK (length(user_hash) = 32),
          installation_hash BLOB NOT NULL CHECK (length(installation_hash) = 32),
          environment TEXT NOT NULL CHECK (environment IN ('production', 'sandbox', 'local')),

          -- Bookkeeping (<doc:Storage#Bookkeeping>). stored_at is the device time of the last successful
          -- refresh.
          stored_at INTEGER,
          server_time INTEGER,
          last_refresh_attempt_at INTEGER,
          last_refresh_failed_at INTEGER,
          last_refresh_failure_reason TEXT,
          high_water_mark INTEGER NOT NULL,
          -- Retention: the latest write or (lazily persisted) read, for least-recently-used pruning.
          last_used_at INTEGER NOT NULL,

          -- The snapshot exactly as the server sent it, so unknown fields round-trip byte for byte.
          snapshot BLOB,
          snapshot_size INTEGER,
          snapshot_sha256 BLOB,

          -- Snapshot-wide fields a decision needs, copied out so a point read never decodes JSON.
          verification TEXT,
          access_context_expires_at INTEGER,
          device_status TEXT,
          device_reason TEXT,
          device_expires_at INTEGER,
          device_next_allowed_at INTEGER,
          device_budget_remaining INTEGER,
          device_budget_limit INTEGER,
          device_budget_window_days INTEGER,
          -- JSON array of {id, label, lastSeenAt}: the redacted device list, no tokens.
          device_list TEXT,

          CHECK ((stored_at IS NULL) = (snapshot IS NULL))
        );

        CREATE INDEX scope_by_last_used ON scope (last_used_at);

        -- One row per entitlement key of the scope's snapshot, for point reads. A row whose status is
        -- NULL is a key the snapshot does not entitle but that an unclaimed purchase lists: it exists
        -- only to carry that purchase's claim hint.
        CREATE TABLE entitlement (
          scope_id INTEGER NOT NULL REFERENCES scope (id) ON DELETE CASCADE,
          key TEXT NOT NULL,
          status TEXT,
          expires_at INTEGER,
          grace_expires_at INTEGER,
          verified_at INTEGER,
          source TEXT,
          product_id TEXT,
          will_renew INTEGER,
          claim_hint TEXT,
          PRIMARY KEY (scope_id, key)
        ) WITHOUT ROWID;

        """##
    ),
    Migration(
      version: 2,
      name: "revision_and_device_block",
      sql: #"""
        -- Every write of a scope row (a snapshot or a failed refresh) stamps it with the next value of
        -- one counter for the whole file, so a reader tells two versions of a row apart exactly by
        -- comparing an integer rather than reading the snapshot's digest on every read-through. The
        -- counter is the file's, not the row's: a scope deleted and written again can get its old row
        -- id back, and must not get an old revision with it. Read-time bookkeeping (high_water_mark,
        -- last_used_at) does not count as a write. Rows written before this migration share
        -- revision 0, which no later write uses.
        CREATE TABLE revision_counter (
          id INTEGER PRIMARY KEY CHECK (id = 1),
          value INTEGER NOT NULL
        );
        INSERT INTO revision_counter (id, value) VALUES (1, 0);
        ALTER TABLE scope ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;

        -- What a deviceBlocked decision reports beyond the status (reason, next allowed change, change
        -- budget, the redacted device list) moves into one JSON column, set only for an installation
        -- that is not active: a point read takes one column that is NULL in the common case, where it
        -- took six, and SQLite copies every text column a read returns. The object has the snapshot's
        -- deviceAccess shape without tokens or unknown fields; the snapshot column keeps everything.
        ALTER TABLE scope ADD COLUMN device_block TEXT;

        -- A device list that is not JSON (this library never wrote one; another tool could have) is
        -- carried over as it is: the upgrade must not fail on it, and a read still reports that one
        -- scope unreadable, as before.
        UPDATE scope SET device_block = CASE
            WHEN device_list IS NOT NULL AND NOT json_valid(device_list) THEN device_list
            ELSE json_object(
              'reason', device_reason,
              'nextAllowedAt', CASE WHEN device_next_allowed_at IS NOT NULL
                THEN strftime('%Y-%m-%dT%H:%M:%fZ', device_next_allowed_at / 1000.0, 'unixepoch') END,
              'changeBudget', CASE WHEN device_budget_remaining IS NOT NULL
                THEN json_object('remaining', device_budget_remaining, 'limit', device_budget_limit,
                  'windowDays', device_budget_window_days) END,
              'devices', json(coalesce(device_list, '[]')))
            END
          WHERE device_status IS NOT NULL AND device_status <> 'active';

        ALTER TABLE scope DROP COLUMN device_reason;
        ALTER TABLE scope DROP COLUMN device_next_allowed_at;
        ALTER TABLE scope DROP COLUMN device_budget_remaining;
        ALTER TABLE scope DROP COLUMN device_budget_limit;
        ALTER TABLE scope DROP COLUMN device_budget_window_days;
        ALTER TABLE scope DROP COLUMN device_list;

        """#
    ),
    Migration(
      version: 3,
      name: "device_time_and_boot_clock",
      sql: #"""
        -- The time model (<doc:TimeModel>): device time and server time kept apart.
        --
        -- high_water_mark now holds device times only (the latest device clock reading seen since the
        -- last successful refresh, which resets it). Under version 2 it was raised with the server's
        -- requestDate as well, and reads raised it with the effective time, so read-time marks mixed
        -- server time in and cannot be separated from device time. The upgrade therefore sets it to
        -- the latest device time a write recorded: the last refresh attempt (which every store and
        -- every failed refresh set), or stored_at. Read-time marks are dropped; rollback detection
        -- starts again from the last write. last_used_at is left as it was: it orders retention only.
        UPDATE scope SET high_water_mark = coalesce(
            max(coalesce(last_refresh_attempt_at, stored_at), coalesce(stored_at, last_refresh_attempt_at)),
            high_water_mark);

        -- The boot clock at the last successful refresh (<doc:TimeModel>): the boot session's
        -- identity and the time since that boot in milliseconds. NULL where the platform has no such
        -- clock, for a refresh stored with an overridden clock, and for every row written before this
        -- migration, which therefore keep to the wall-clock rules until their next refresh.
        ALTER TABLE scope ADD COLUMN refresh_boot_session TEXT;
        ALTER TABLE scope ADD COLUMN refresh_boot_uptime INTEGER;

        -- How far the server's clock was ahead of the device's at the last successful refresh, in
        -- milliseconds. Derived, never written, so it cannot disagree with the two times it comes
        -- from; here for people reading the file with the sqlite3 shell.
        ALTER TABLE scope ADD COLUMN server_offset INTEGER
          GENERATED ALWAYS AS (server_time - stored_at) VIRTUAL;

        -- Which successful refresh the row's high-water mark belongs to: the revision of the write
        -- that stored the snapshot. Read-time marks are persisted only onto the refresh they were
        -- observed under, so a mark raised before another process's refresh cannot undo that
        -- refresh's reset (<doc:TimeModel>). NULL without a snapshot. Rows stored before this
        -- migration take their current revision, which no later write reuses.
        ALTER TABLE scope ADD COLUMN refresh_revision INTEGER;
        UPDATE scope SET refresh_revision = revision WHERE stored_at IS NOT NULL;

        """#
    ),
    Migration(
      version: 4,
      name: "purchase_queue",
      sql: #"""
        -- The purchase queue (<doc:PurchaseQueue>): one row per store transaction, bound for good to the
        -- scope that first observed it. Only hashes identify the observer (its scope_key, and its user_hash
        -- and environment for the support tool's listing); the raw app-user ID never reaches the file.
        -- Times are integer milliseconds since the Unix epoch, device time.
        CREATE TABLE purchase_queue (
          -- Observation order: an observer's entries are posted in id order.
          id INTEGER PRIMARY KEY,
          -- Idempotence: a transaction observed again, under any user, finds this row and changes
          -- nothing.
          transaction_id TEXT NOT NULL UNIQUE CHECK (length(transaction_id) BETWEEN 1 AND 256),
          observer_key BLOB NOT NULL CHECK (length(observer_key) = 32),
          observer_user_hash BLOB NOT NULL CHECK (length(observer_user_hash) = 32),
          environment TEXT NOT NULL CHECK (environment IN ('production', 'sandbox', 'local')),
          product_id TEXT NOT NULL CHECK (length(product_id) BETWEEN 1 AND 256),
          -- The store's opaque proof of purchase: a token, never logged, printed or listed.
          payload BLOB NOT NULL,
          state TEXT NOT NULL
            CHECK (state IN ('pending', 'posting', 'synced', 'conflict', 'rejected', 'expired')),
          -- Posts begun, counted before each network call, so a crash mid-post still counts.
          attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
          -- When a pending entry may be posted again after a transient failure; NULL: at once.
          next_attempt_at INTEGER,
          first_observed_at INTEGER NOT NULL,
          -- When the entry reached its state: retention deletes synced, conflicted, rejected and
          -- expired entries a retention period after it.
          state_changed_at INTEGER NOT NULL,
          -- The last failed post's kind (transient, transient_503, rejected_400, ...); a conflict's
          -- resolution (login_required, restore_required, support_required).
          last_failure TEXT,
          resolution TEXT,
          CHECK ((state = 'conflict') = (resolution IS NOT NULL))
        );

        -- Only unsent entries, so the index stays as small as the backlog: what a scope with no row
        -- asks ("did it observe a purchase still to post?"), and what a new scope row counts.
        CREATE INDEX purchase_queue_unsent ON purchase_queue (observer_key, id)
          WHERE state IN ('pending', 'posting');

        -- How many unsent entries the scope observed, kept on its row so a scope read answers "is a
        -- purchase pending?" with one more column instead of a subquery (a subquery opens a cursor on
        -- every read-through, an eighth of its cost). A new scope row counts the queue when it is
        -- inserted (ScopeSQL's upserts); these triggers keep the count as entries come, change state
        -- and go, in the same transaction, whoever writes the queue.
        ALTER TABLE scope ADD COLUMN unsent_purchases INTEGER NOT NULL DEFAULT 0
          CHECK (unsent_purchases >= 0);

        CREATE TRIGGER purchase_queue_count_insert AFTER INSERT ON purchase_queue
          WHEN NEW.state IN ('pending', 'posting')
        BEGIN
          UPDATE scope SET unsent_purchases = unsent_purchases + 1 WHERE scope_key = NEW.observer_key;
        END;

        CREATE TRIGGER purchase_queue_count_update AFTER UPDATE OF state ON purchase_queue
          WHEN (OLD.state IN ('pending', 'posting')) != (NEW.state IN ('pending', 'posting'))
        BEGIN
          UPDATE scope SET unsent_purchases = unsent_purchases
            + CASE WHEN NEW.state IN ('pending', 'posting') THEN 1 ELSE -1 END
          WHERE scope_key = NEW.observer_key;
        END;

        CREATE TRIGGER purchase_queue_count_delete AFTER DELETE ON purchase_queue
          WHEN OLD.state IN ('pending', 'posting')
        BEGIN
          UPDATE scope SET unsent_purchases = unsent_purchases - 1 WHERE scope_key = OLD.observer_key;
        END;

        -- Every entry of one observer, for a sync result, and retention by age.
        CREATE INDEX purchase_queue_by_observer ON purchase_queue (observer_key, id);
        CREATE INDEX purchase_queue_by_state_change ON purchase_queue (state_changed_at);

        """#
    ),
    Migration(
      version: 5,
      name: "signed_snapshots",
      sql: #"""
        -- Trusted snapshots (<doc:TrustedSnapshots>): the signed material kept with the snapshot, so every
        -- read of the scope from disk can check the signature again and compare the normalized columns with
        -- the body it covers.
        --
        -- Written by every store; NULL for a snapshot that came with no signature, and for every row
        -- written before this migration, which a cache with trust roots therefore reads as
        -- `failed(missing_signature)` until its next refresh.

        -- The intermediate key's 64-byte signature over the response message.
        ALTER TABLE scope ADD COLUMN response_signature BLOB;
        -- The intermediate key's 104-byte certificate: key, notAfter, the root's signature.
        ALTER TABLE scope ADD COLUMN response_intermediate BLOB;
        -- The nonce the server signed (16 bytes, or empty), and the scope hash it signed.
        ALTER TABLE scope ADD COLUMN response_nonce BLOB;
        ALTER TABLE scope ADD COLUMN response_scope_hash BLOB;
        -- The nonce the request sent; NULL when it sent none (nothing to compare).
        ALTER TABLE scope ADD COLUMN request_nonce BLOB;

        -- What the library decided when the snapshot arrived, with trust roots configured: the
        -- trusted server time it checked the intermediate's expiry against (<doc:TimeModel>), and the
        -- reason it failed (NULL when verified). trust_checked_at is NULL when the writer had no trust
        -- roots: `verification` is then the body's own claim. A read with trust roots decides again from
        -- the columns above and must reach the same verdict, or the row was edited: `failed(tampered)`.
        ALTER TABLE scope ADD COLUMN trust_checked_at INTEGER;
        ALTER TABLE scope ADD COLUMN verification_failure TEXT;

        """#
    ),
    Migration(
      version: 6,
      name: "snapshot_body_last",
      sql: ##"""
        -- The snapshot's body moves to the end of the scope row.
        --
        -- A body of a few KiB is larger than a page keeps in place, so most of the row's record goes
        -- to overflow pages, and every column stored after the body is read by walking them. The
        -- columns a decision reads were after it: the scope's verification, device access and access
        -- context, its revision, its boot clock and its purchase count, all added after the body or by
        -- later migrations (ALTER TABLE ADD COLUMN appends). A point read of a 10-entitlement snapshot
        -- (4.3 KiB) ran about 8,600 instructions of 25,700 on that walk (callgrind). With the body
        -- last, every column a read needs comes before it, in the page.
        --
        -- SQLite cannot move a column, so both tables are built again and renamed into place, as
        -- SQLite's documented procedure for other table changes does. Foreign keys are on, so the
        -- old scope table is dropped only after the old entitlement table: dropping it first would
        -- delete the entitlement rows by their ON DELETE CASCADE. The purchase queue's triggers name
        -- the scope table, which the rename requires to exist, so they are dropped and made again
        -- as 0004 made them.
        --
        -- A column added by a later migration goes after the body again: such a migration should
        -- build the table again like this one, or keep what it adds in a table of its own.

        DROP TRIGGER purchase_queue_count_insert;
        DROP TRIGGER purchase_queue_count_update;
        DROP TRIGGER purchase_queue_count_delete;

        CREATE TABLE scope_rebuilt (
          id INTEGER PRIMARY KEY,
          scope_key BLOB NOT NULL UNIQUE CHECK (length(scope_key) = 32),
          sdk_key_hash BLOB NOT NULL CHECK (length(sdk_key_hash) = 32),
          user_hash BLOB NOT NULL CHECK (length(user_hash) = 32),
          installation_hash BLOB NOT NULL CHECK (length(installation_hash) = 32),
          environment TEXT NOT NULL CHECK (environment IN ('production', 'sandbox', 'local')),

          -- Bookkeeping (<doc:Storage#Bookkeeping>). stored_at is the device time of the last successful
          -- refresh.
          stored_at INTEGER,
          server_time INTEGER,
          last_refresh_attempt_at INTEGER,
          last_refresh_failed_at INTEGER,
          last_refresh_failure_reason TEXT,
          high_water_mark INTEGER NOT NULL,
          -- Retention: the latest write or (lazily persisted) read, for least-recently-used pruning.
          last_used_at INTEGER NOT NULL,

          snapshot_size INTEGER,
          snapshot_sha256 BLOB,

          -- Snapshot-wide fields a decision needs, copied out so a point read never decodes JSON.
          verification TEXT,
          access_context_expires_at INTEGER,
          device_status TEXT,
          device_expires_at INTEGER,
          revision INTEGER NOT NULL DEFAULT 0,
          device_block TEXT,
          -- The boot clock at the last successful refresh (0003).
          refresh_boot_session TEXT,
          refresh_boot_uptime INTEGER,
          -- Derived, never written (0003).
          server_offset INTEGER GENERATED ALWAYS AS (server_time - stored_at) VIRTUAL,
          refresh_revision INTEGER,
          -- Kept by the purchase queue's triggers (0004).
          unsent_purchases INTEGER NOT NULL DEFAULT 0 CHECK (unsent_purchases >= 0),

          -- The signed material (0005).
          response_signature BLOB,
          response_intermediate BLOB,
          response_nonce BLOB,
          response_scope_hash BLOB,
          request_nonce BLOB,
          trust_checked_at INTEGER,
          verification_failure TEXT,

          -- The snapshot exactly as the server sent it, so unknown fields round-trip byte for byte.
          -- Last, and it must stay last: see the top of this file.
          snapshot BLOB,

          CHECK ((stored_at IS NULL) = (snapshot IS NULL))
        );

        INSERT INTO scope_rebuilt (
          id, scope_key, sdk_key_hash, user_hash, installation_hash, environment, stored_at,
          server_time, last_refresh_attempt_at, last_refresh_failed_at, last_refresh_failure_reason,
          high_water_mark, last_used_at, snapshot_size, snapshot_sha256, verification,
          access_context_expires_at, device_status, device_expires_at, revision, device_block,
          refresh_boot_session, refresh_boot_uptime, refresh_revision, unsent_purchases,
          response_signature, response_intermediate, response_nonce, response_scope_hash,
          request_nonce, trust_checked_at, verification_failure, snapshot)
        SELECT
          id, scope_key, sdk_key_hash, user_hash, installation_hash, environment, stored_at,
          server_time, last_refresh_attempt_at, last_refresh_failed_at, last_refresh_failure_reason,
          high_water_mark, last_used_at, snapshot_size, snapshot_sha256, verification,
          access_context_expires_at, device_status, device_expires_at, revision, device_block,
          refresh_boot_session, refresh_boot_uptime, refresh_revision, unsent_purchases,
          response_signature, response_intermediate, response_nonce, response_scope_hash,
          request_nonce, trust_checked_at, verification_failure, snapshot
        FROM scope;

        CREATE TABLE entitlement_rebuilt (
          scope_id INTEGER NOT NULL REFERENCES scope_rebuilt (id) ON DELETE CASCADE,
          key TEXT NOT NULL,
          status TEXT,
          expires_at INTEGER,
          grace_expires_at INTEGER,
          verified_at INTEGER,
          source TEXT,
          product_id TEXT,
          will_renew INTEGER,
          claim_hint TEXT,
          PRIMARY KEY (scope_id, key)
        ) WITHOUT ROWID;

        INSERT INTO entitlement_rebuilt (
          scope_id, key, status, expires_at, grace_expires_at, verified_at, source, product_id,
          will_renew, claim_hint)
        SELECT
          scope_id, key, status, expires_at, grace_expires_at, verified_at, source, product_id,
          will_renew, claim_hint
        FROM entitlement;

        DROP TABLE entitlement;
        DROP TABLE scope;
        -- The rename also makes entitlement's foreign key name the scope table again.
        ALTER TABLE scope_rebuilt RENAME TO scope;
        ALTER TABLE entitlement_rebuilt RENAME TO entitlement;

        CREATE INDEX scope_by_last_used ON scope (last_used_at);

        CREATE TRIGGER purchase_queue_count_insert AFTER INSERT ON purchase_queue
          WHEN NEW.state IN ('pending', 'posting')
        BEGIN
          UPDATE scope SET unsent_purchases = unsent_purchases + 1 WHERE scope_key = NEW.observer_key;
        END;

        CREATE TRIGGER purchase_queue_count_update AFTER UPDATE OF state ON purchase_queue
          WHEN (OLD.state IN ('pending', 'posting')) != (NEW.state IN ('pending', 'posting'))
        BEGIN
          UPDATE scope SET unsent_purchases = unsent_purchases
            + CASE WHEN NEW.state IN ('pending', 'posting') THEN 1 ELSE -1 END
          WHERE scope_key = NEW.observer_key;
        END;

        CREATE TRIGGER purchase_queue_count_delete AFTER DELETE ON purchase_queue
          WHEN OLD.state IN ('pending', 'posting')
        BEGIN
          UPDATE scope SET unsent_purchases = unsent_purchases - 1 WHERE scope_key = OLD.observer_key;
        END;

        """##
    ),
    Migration(
      version: 7,
      name: "schema_compatibility",
      sql: #"""
        -- The oldest schema version that still reads this file correctly, beside the version that
        -- wrote it (PRAGMA user_version), as SQLite's own header keeps a read version beside a write
        -- version. A build older than the file reads it when its own version is at or above this
        -- floor, writes nothing, and never migrates, moves or erases it; below the floor it refuses
        -- the file, as every build does for a file from a newer schema it has no floor for.
        --
        -- A later migration that changes what an existing column or row means raises the floor to its
        -- own version, in its own transaction (UPDATE schema_compatibility SET read_version = N); one
        -- that only adds (a column an older build does not select, a table it does not read) leaves
        -- it. This one only adds a table, so version 6 still reads a version 7 file.
        CREATE TABLE schema_compatibility (
          id INTEGER PRIMARY KEY CHECK (id = 1),
          read_version INTEGER NOT NULL CHECK (read_version >= 1)
        );
        INSERT INTO schema_compatibility (id, read_version) VALUES (1, 6);

        """#
    ),
    Migration(
      version: 8,
      name: "imported_snapshots",
      sql: ##"""
        -- Adopting on an installed base (<doc:AdoptingOnAnInstalledBase>): a previous cache's snapshot,
        -- imported as of the time that cache saved it. The bookkeeping columns hold what a refresh at
        -- the save would have written; two new columns say it was an import, of what (a label the SDK
        -- gives) and when (device time). NULL for a refresh's snapshot and for every row written
        -- before this migration; the next refresh clears both.
        --
        -- A decision reads them, so they go before the body, which must stay last (0006 says why): the
        -- tables are built again as 0006 built them, with the two columns added, and every row copied
        -- as it is.
        --
        -- Version 7 still reads a version 8 file safely: it reads no column by position and none of
        -- these two. Without trust roots it takes an import for the unverified refresh it resembles
        -- (its `verification` column says `not_requested`), so never high trust; with trust roots it
        -- finds no signature and reads it `failed`, which grants nothing under `requireVerified`
        -- and is only informational otherwise. The read floor stays.

        DROP TRIGGER purchase_queue_count_insert;
        DROP TRIGGER purchase_queue_count_update;
        DROP TRIGGER purchase_queue_count_delete;

        CREATE TABLE scope_rebuilt (
          id INTEGER PRIMARY KEY,
          scope_key BLOB NOT NULL UNIQUE CHECK (length(scope_key) = 32),
          sdk_key_hash BLOB NOT NULL CHECK (length(sdk_key_hash) = 32),
          user_hash BLOB NOT NULL CHECK (length(user_hash) = 32),
          installation_hash BLOB NOT NULL CHECK (length(installation_hash) = 32),
          environment TEXT NOT NULL CHECK (environment IN ('production', 'sandbox', 'local')),

          -- Bookkeeping (<doc:Storage#Bookkeeping>). stored_at is the device time of the last successful
          -- refresh.
          stored_at INTEGER,
          server_time INTEGER,
          last_refresh_attempt_at INTEGER,
          last_refresh_failed_at INTEGER,
          last_refresh_failure_reason TEXT,
          high_water_mark INTEGER NOT NULL,
          -- Retention: the latest write or (lazily persisted) read, for least-recently-used pruning.
          last_used_at INTEGER NOT NULL,

          snapshot_size INTEGER,
          snapshot_sha256 BLOB,

          -- Snapshot-wide fields a decision needs, copied out so a point read never decodes JSON.
          verification TEXT,
          access_context_expires_at INTEGER,
          device_status TEXT,
          device_expires_at INTEGER,
          revision INTEGER NOT NULL DEFAULT 0,
          device_block TEXT,
          -- The boot clock at the last successful refresh (0003).
          refresh_boot_session TEXT,
          refresh_boot_uptime INTEGER,
          -- Derived, never written (0003).
          server_offset INTEGER GENERATED ALWAYS AS (server_time - stored_at) VIRTUAL,
          refresh_revision INTEGER,
          -- Kept by the purchase queue's triggers (0004).
          unsent_purchases INTEGER NOT NULL DEFAULT 0 CHECK (unsent_purchases >= 0),

          -- The signed material (0005).
          response_signature BLOB,
          response_intermediate BLOB,
          response_nonce BLOB,
          response_scope_hash BLOB,
          request_nonce BLOB,
          trust_checked_at INTEGER,
          verification_failure TEXT,
          -- An import's label and device time (0008); NULL for a refresh's snapshot.
          import_label TEXT,
          imported_at INTEGER,

          -- The snapshot exactly as the server sent it, so unknown fields round-trip byte for byte.
          -- Last, and it must stay last: see the top of this file.
          snapshot BLOB,

          CHECK ((stored_at IS NULL) = (snapshot IS NULL))
        );

        INSERT INTO scope_rebuilt (
          id, scope_key, sdk_key_hash, user_hash, installation_hash, environment, stored_at,
          server_time, last_refresh_attempt_at, last_refresh_failed_at, last_refresh_failure_reason,
          high_water_mark, last_used_at, snapshot_size, snapshot_sha256, verification,
          access_context_expires_at, device_status, device_expires_at, revision, device_block,
          refresh_boot_session, refresh_boot_uptime, refresh_revision, unsent_purchases,
          response_signature, response_intermediate, response_nonce, response_scope_hash,
          request_nonce, trust_checked_at, verification_failure, snapshot)
        SELECT
          id, scope_key, sdk_key_hash, user_hash, installation_hash, environment, stored_at,
          server_time, last_refresh_attempt_at, last_refresh_failed_at, last_refresh_failure_reason,
          high_water_mark, last_used_at, snapshot_size, snapshot_sha256, verification,
          access_context_expires_at, device_status, device_expires_at, revision, device_block,
          refresh_boot_session, refresh_boot_uptime, refresh_revision, unsent_purchases,
          response_signature, response_intermediate, response_nonce, response_scope_hash,
          request_nonce, trust_checked_at, verification_failure, snapshot
        FROM scope;

        CREATE TABLE entitlement_rebuilt (
          scope_id INTEGER NOT NULL REFERENCES scope_rebuilt (id) ON DELETE CASCADE,
          key TEXT NOT NULL,
          status TEXT,
          expires_at INTEGER,
          grace_expires_at INTEGER,
          verified_at INTEGER,
          source TEXT,
          product_id TEXT,
          will_renew INTEGER,
          claim_hint TEXT,
          PRIMARY KEY (scope_id, key)
        ) WITHOUT ROWID;

        INSERT INTO entitlement_rebuilt (
          scope_id, key, status, expires_at, grace_expires_at, verified_at, source, product_id,
          will_renew, claim_hint)
        SELECT
          scope_id, key, status, expires_at, grace_expires_at, verified_at, source, product_id,
          will_renew, claim_hint
        FROM entitlement;

        DROP TABLE entitlement;
        DROP TABLE scope;
        -- The rename also makes entitlement's foreign key name the scope table again.
        ALTER TABLE scope_rebuilt RENAME TO scope;
        ALTER TABLE entitlement_rebuilt RENAME TO entitlement;

        CREATE INDEX scope_by_last_used ON scope (last_used_at);

        CREATE TRIGGER purchase_queue_count_insert AFTER INSERT ON purchase_queue
          WHEN NEW.state IN ('pending', 'posting')
        BEGIN
          UPDATE scope SET unsent_purchases = unsent_purchases + 1 WHERE scope_key = NEW.observer_key;
        END;

        CREATE TRIGGER purchase_queue_count_update AFTER UPDATE OF state ON purchase_queue
          WHEN (OLD.state IN ('pending', 'posting')) != (NEW.state IN ('pending', 'posting'))
        BEGIN
          UPDATE scope SET unsent_purchases = unsent_purchases
            + CASE WHEN NEW.state IN ('pending', 'posting') THEN 1 ELSE -1 END
          WHERE scope_key = NEW.observer_key;
        END;

        CREATE TRIGGER purchase_queue_count_delete AFTER DELETE ON purchase_queue
          WHEN OLD.state IN ('pending', 'posting')
        BEGIN
          UPDATE scope SET unsent_purchases = unsent_purchases - 1 WHERE scope_key = OLD.observer_key;
        END;

        """##
    ),
    Migration(
      version: 9,
      name: "file_moves",
      sql: ##"""
        -- Moving a cache file (<doc:AdoptingOnAnInstalledBase#Moving-the-file-into-an-App-Group>):
        -- what lets a move that was interrupted be run again without merging anything twice.
        --
        -- Each file has an identity of its own, made when the file reaches this version. A move
        -- merges an old file into this one and records the old file's identity here in the same
        -- transaction; only then is the old file removed. Run again after a crash between the two, the
        -- move finds the identity already merged, merges nothing (a queued purchase this file has
        -- since posted and let go of is not queued again) and only removes the old file.
        --
        -- Both tables are new and nothing older reads them: the read floor stays.
        CREATE TABLE file_identity (
          id INTEGER PRIMARY KEY CHECK (id = 1),
          value BLOB NOT NULL CHECK (length(value) = 16)
        );
        INSERT INTO file_identity (id, value) VALUES (1, randomblob(16));

        CREATE TABLE merged_file (
          identity BLOB PRIMARY KEY CHECK (length(identity) = 16),
          -- Device time of the merge, for the support tool.
          merged_at INTEGER NOT NULL
        ) WITHOUT ROWID;

        """##
    ),
  ]
}
