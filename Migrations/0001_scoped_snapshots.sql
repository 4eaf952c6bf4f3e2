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
