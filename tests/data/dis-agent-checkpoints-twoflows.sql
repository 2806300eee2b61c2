-- dis-agent-checkpoints-twoflows.sql: synthetic fixture (SQL text, checked by loading it with the sqlite3 CLI; schema copied verbatim
-- from the real DIS Agent 1.2.4 file dis-agent-checkpoints.db) for `disagent import-state`.
-- Edge case: two flows, with the same file tracked by both (the primary key is (flow, fileId)), plus odd rows.
-- Intended agent configuration: flow A, stream s1, filePattern @DIR@/logs/app.log* (flow id
-- "dis:s1:@DIR@/logs/app.log*"); flow B, stream s2, filePattern @DIR@/logs/*.log.
-- Rows 1-2: flow A: app.log (8 of 14 bytes acknowledged) and its rotated predecessor app.log.1 (done).
-- Row 3: flow B: the same app.log (same fileId), fully acknowledged (14).  Offsets are per flow.
-- Row 4: flow B: an empty file, as the real agent 1.2.4 writes it (size 0, offset 0, headerLength -1,
--   headerString = SHA-256 of 512 zero bytes; observed with the same build).
-- Row 5: flow B: a file that no longer exists (stale row; fileId of no file).
-- Row 6: flow B: a fileId that is not "(dev=..,ino=..)": the agent's Windows form "<UUID>_<creation
--   millis>".  The path does not exist.
-- Row 7: flow B: old.log, 2 of 4 bytes acknowledged, but lastUpdated is 2020-01-01, older than
--   checkpointTimeToLiveDays (7).  Java deletes the row when it starts and then sends old.log again from
--   offset 0 ([New] file).
-- What the real DIS Agent 1.2.4 did with this fixture (same build as dis-agent-checkpoints.db, the
-- configuration above, checkpointFile pointing at the loaded db, 6 s, then SIGTERM): "Deleted 1 old
-- checkpoints" (row 7) at start.  Flow A resumed app.log at 8 and sent "three".  Flow B sent "old" (old.log
-- from 0) and nothing from app.log (its own offset 14).  It found rows 5 and 6 gone on two scans and
-- deleted them ("Find [Delete] file", "Delete 2 checkpoints").  It tracked empty.log from its row.
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
-- file: logs/app.log 14 "one\ntwo\nthree\n"
-- file: logs/app.log.1 5 "zero\n"
-- file: logs/empty.log 0 ""
-- file: logs/old.log 4 "old\n"
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE FILE_CHECKPOINTS(       flow text,       path text,       fileId text,       lastModifiedTime bigint,       size bigint,       offset bigint,       headerLength int,       headerString text,       lastUpdated datetime,       primary key (flow, fileId));
-- flow A, current file, after "one\ntwo\n"
INSERT INTO FILE_CHECKPOINTS VALUES('dis:s1:@DIR@/logs/app.log*','@DIR@/logs/app.log','@FILEID:logs/app.log@',1796143016643,14,8,14,'b6285c57e8797db5d4c51c80d6f11938afda9b11c6a003549709189e9b4b92a2',strftime('%Y-%m-%d %H:%M:%f','now'));
-- flow A, rotated file, done
INSERT INTO FILE_CHECKPOINTS VALUES('dis:s1:@DIR@/logs/app.log*','@DIR@/logs/app.log.1','@FILEID:logs/app.log.1@',1796143000000,5,5,5,'ff9fb51036a15c5c92c8b80d3dac03262bfb9d081b1490f719ab4127e6069fce',strftime('%Y-%m-%d %H:%M:%f','now'));
-- flow B, the same file as row 1, done
INSERT INTO FILE_CHECKPOINTS VALUES('dis:s2:@DIR@/logs/*.log','@DIR@/logs/app.log','@FILEID:logs/app.log@',1796143016643,14,14,14,'b6285c57e8797db5d4c51c80d6f11938afda9b11c6a003549709189e9b4b92a2',strftime('%Y-%m-%d %H:%M:%f','now'));
-- flow B, empty file: headerLength -1
INSERT INTO FILE_CHECKPOINTS VALUES('dis:s2:@DIR@/logs/*.log','@DIR@/logs/empty.log','@FILEID:logs/empty.log@',1796143132695,0,0,-1,'076a27c79e5ace2a3d47f9dd2e83e4ff6ea8872b3c2218f66c92b89b55f36560',strftime('%Y-%m-%d %H:%M:%f','now'));
-- flow B, file gone
INSERT INTO FILE_CHECKPOINTS VALUES('dis:s2:@DIR@/logs/*.log','@DIR@/logs/gone.log','(dev=fe00,ino=999999999)',1796142000000,40,40,40,'1d5f913d4591f2de124be0d31d4cebf23c5f6ea61231a3afa0e66c953a76098e',strftime('%Y-%m-%d %H:%M:%f','now'));
-- flow B, Windows-style fileId
INSERT INTO FILE_CHECKPOINTS VALUES('dis:s2:@DIR@/logs/*.log','@DIR@/logs/win.log','6c1f9a4e-0b7e-4f43-9d3a-2f5b8c0e7a11_1700000000000',1700000000000,10,10,10,'44ab6c88be83b32482f14f05c115ff01ebb923fb6ce1b6c2ba76372dee86e9ac',strftime('%Y-%m-%d %H:%M:%f','now'));
-- flow B, expired by Java's TTL (lastUpdated 2020-01-01)
INSERT INTO FILE_CHECKPOINTS VALUES('dis:s2:@DIR@/logs/*.log','@DIR@/logs/old.log','@FILEID:logs/old.log@',1577836800000,4,2,4,'01d09d19c2139a46aebfb577780d123d7396e97201bc7ead210a2ebff8239dee','2020-01-01 00:00:00.000');
COMMIT;
