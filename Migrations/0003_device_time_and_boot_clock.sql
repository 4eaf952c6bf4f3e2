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
