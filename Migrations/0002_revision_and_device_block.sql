-- Every write of a scope row (a snapshot or a failed refresh) adds one to its revision, so a
-- reader tells two versions of a row apart exactly, two writes in one millisecond included,
-- by comparing an integer rather than reading the snapshot's digest on every read-through.
-- Read-time bookkeeping (high_water_mark, last_used_at) does not count as a write.
ALTER TABLE scope ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;

-- What a deviceBlocked decision reports beyond the status (reason, next allowed change, change
-- budget, the redacted device list) moves into one JSON column, set only for an installation
-- that is not active: a point read takes one column that is NULL in the common case, where it
-- took six, and SQLite copies every text column a read returns. The object has the snapshot's
-- deviceAccess shape without tokens or unknown fields; the snapshot column keeps everything.
ALTER TABLE scope ADD COLUMN device_block TEXT;

UPDATE scope SET device_block = json_object(
    'reason', device_reason,
    'nextAllowedAt', CASE WHEN device_next_allowed_at IS NOT NULL
      THEN strftime('%Y-%m-%dT%H:%M:%fZ', device_next_allowed_at / 1000.0, 'unixepoch') END,
    'changeBudget', CASE WHEN device_budget_remaining IS NOT NULL
      THEN json_object('remaining', device_budget_remaining, 'limit', device_budget_limit,
        'windowDays', device_budget_window_days) END,
    'devices', json(coalesce(device_list, '[]')))
  WHERE device_status IS NOT NULL AND device_status <> 'active';

ALTER TABLE scope DROP COLUMN device_reason;
ALTER TABLE scope DROP COLUMN device_next_allowed_at;
ALTER TABLE scope DROP COLUMN device_budget_remaining;
ALTER TABLE scope DROP COLUMN device_budget_limit;
ALTER TABLE scope DROP COLUMN device_budget_window_days;
ALTER TABLE scope DROP COLUMN device_list;
