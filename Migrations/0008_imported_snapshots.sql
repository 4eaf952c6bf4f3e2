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
