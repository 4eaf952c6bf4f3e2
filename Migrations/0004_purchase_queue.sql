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
