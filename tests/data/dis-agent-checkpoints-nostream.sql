-- dis-agent-checkpoints-nostream.sql: synthetic fixture (SQL text, checked by loading it with the sqlite3 CLI; schema copied verbatim
-- from the real DIS Agent 1.2.4 file dis-agent-checkpoints.db) for `disagent import-state`.
-- Edge case: entries whose flow matches no flow of the new configuration.
-- Intended agent configuration: one flow, stream s1, filePattern @DIR@/app/*.log (flow id
-- "dis:s1:@DIR@/app/*.log").  Row 1 matches it; row 2 names a stream that is not configured; row 3
-- names the configured stream s1 but another filePattern, so it is a different flow too (the flow id is
-- the whole "dis:STREAM:PATTERN" string).
-- What the real DIS Agent 1.2.4 did with this fixture (same build as dis-agent-checkpoints.db, the
-- configuration above, checkpointFile pointing at the loaded db, 6 s, then SIGTERM): it resumed a.log at
-- 16 and sent one record, "alpha 3".  It left rows 2 and 3 untouched: it never reads or deletes rows of
-- flows it does not have, except by the lastUpdated TTL.
-- Placeholders, replaced by the test before loading (e.g. sed, then sqlite3 DB < file):
--   @DIR@          the test's temporary directory (absolute, no trailing '/')
--   @FILEID:NAME@  the DIS Agent fileId of file @DIR@/NAME, as Java's UnixFileKey.toString() prints it:
--                  "(dev=<st_dev in lowercase hex>,ino=<st_ino in decimal>)", i.e. the output of
--                  stat -c '(dev=%D,ino=%i)' @DIR@/NAME
-- headerString = lowercase hex SHA-256 of the file's first headerLength bytes (for headerLength -1,
-- of 512 zero bytes, as the agent writes for an empty file).  lastUpdated uses SQLite's 'now' (UTC),
-- as the agent does, so the rows are fresh when loaded; Java deletes rows older than
-- checkpointTimeToLiveDays (default 7) by lastUpdated when it starts.
--
-- Files to create under @DIR@ before loading, one per line "-- file: NAME SIZE BYTES",
-- BYTES being the exact contents as a C string literal:
-- file: app/a.log 24 "alpha 1\nalpha 2\nalpha 3\n"
-- file: old/x.log 12 "old 1\nold 2\n"
-- file: other/y.log 4 "y 1\n"
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE FILE_CHECKPOINTS(       flow text,       path text,       fileId text,       lastModifiedTime bigint,       size bigint,       offset bigint,       headerLength int,       headerString text,       lastUpdated datetime,       primary key (flow, fileId));
-- matches flow dis:s1:@DIR@/app/*.log: 16 of 24 bytes acknowledged (after "alpha 2\n")
INSERT INTO FILE_CHECKPOINTS VALUES('dis:s1:@DIR@/app/*.log','@DIR@/app/a.log','@FILEID:app/a.log@',1796143016643,24,16,24,'d97709e30bfc381e831d1dd7bb90d95140ba88d5fe2b333f354df32bb42e9db9',strftime('%Y-%m-%d %H:%M:%f','now'));
-- stream 'retired' is not configured any more
INSERT INTO FILE_CHECKPOINTS VALUES('dis:retired:@DIR@/old/*.log','@DIR@/old/x.log','@FILEID:old/x.log@',1796143010000,12,6,12,'896a3c29c6f1ee52c8f0a922ae045c79a95b4831172771f5c8eec1561ae8b18a',strftime('%Y-%m-%d %H:%M:%f','now'));
-- stream s1 is configured, but with another filePattern: a different flow
INSERT INTO FILE_CHECKPOINTS VALUES('dis:s1:@DIR@/other/*.log','@DIR@/other/y.log','@FILEID:other/y.log@',1796143011000,4,4,4,'e64e13e20f7c48ffa04d7db63ca9ad2e5564c6b75a45c249959523b61fb54b05',strftime('%Y-%m-%d %H:%M:%f','now'));
COMMIT;
