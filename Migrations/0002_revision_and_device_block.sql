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
