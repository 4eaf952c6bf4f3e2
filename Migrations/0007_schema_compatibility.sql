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
