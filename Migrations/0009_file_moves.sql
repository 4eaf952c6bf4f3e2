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
