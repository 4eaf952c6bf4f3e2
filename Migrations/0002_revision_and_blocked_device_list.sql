-- Every write of a scope row (a snapshot or a failed refresh) adds one to its revision, so a
-- reader tells two versions of a row apart exactly, two writes in one millisecond included,
-- by comparing an integer rather than reading the snapshot's digest on every read-through.
-- Read-time bookkeeping (high_water_mark, last_used_at) does not count as a write.
ALTER TABLE scope ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;

-- device_list now holds the redacted device list of a blocked installation only: the list
-- appears in deviceBlocked decisions alone, and a list stored for an active installation cost
-- every read-through of it a copy. The snapshot column still holds the full device access.
UPDATE scope SET device_list = NULL WHERE device_status = 'active';
