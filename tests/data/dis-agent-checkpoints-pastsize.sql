-- dis-agent-checkpoints-pastsize.sql: synthetic fixture (SQL text, checked by loading it with the sqlite3 CLI; schema copied verbatim
-- from the real DIS Agent 1.2.4 file dis-agent-checkpoints.db) for `disagent import-state`.
-- Edge case: offsets larger than the file's size, in the row and/or on disk.
-- Intended agent configuration: one flow, stream s1, filePattern @DIR@/app/*.log.
-- Row 1 (a.log): the header matches, but offset 400 is past both the row's size and the real size (14).
-- Row 2 (b.log): the row's size and headerLength (87) are older than its offset (150).  The real agent
--   wrote such a row while we made dis-agent-checkpoints.db: it updates size/headerLength from the
--   record's file snapshot, which can predate the record.  The real file (120 bytes) starts with the
--   same 87 bytes (the header matches) and is shorter than the offset.
-- Row 3 (c.log): same inode, but the file was rewritten.  The header (the first 300 bytes of the old
--   content) does not match the current file, which is shorter than headerLength.  Java calls that
--   [Re-New] and restarts at offset 0.
-- What the real DIS Agent 1.2.4 did with this fixture (same build as dis-agent-checkpoints.db, the
-- configuration above, checkpointFile pointing at the loaded db, 6 s, then SIGTERM): it sent only
-- "new content" from c.log ([Re-New], offset 0, final row 12/12/12).  It kept offsets 400 (a.log) and
-- 150 (b.log) as they were and sent nothing from either file.  With a header that matches and a row
-- size <= the file size, it seeks past the end and silently skips whatever the file holds there later.
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
-- file: app/a.log 14 "line 1\nline 2\n"
-- file: app/b.log 120 "b-line 01: some payload\nb-line 02: some payload\nb-line 03: some payload\nb-line 04: some payload\nb-line 05: some payload\n"
-- file: app/c.log 12 "new content\n"
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE FILE_CHECKPOINTS(       flow text,       path text,       fileId text,       lastModifiedTime bigint,       size bigint,       offset bigint,       headerLength int,       headerString text,       lastUpdated datetime,       primary key (flow, fileId));
-- offset past the row's size and the file's size; header matches
INSERT INTO FILE_CHECKPOINTS VALUES('dis:s1:@DIR@/app/*.log','@DIR@/app/a.log','@FILEID:app/a.log@',1796143016643,14,400,14,'9060554863a62b9db5f726216876654e561896071d2e6480f2048b70e0fdadb9',strftime('%Y-%m-%d %H:%M:%f','now'));
-- size/headerLength lag behind the offset (as the real agent writes); offset 150 > real size 120
INSERT INTO FILE_CHECKPOINTS VALUES('dis:s1:@DIR@/app/*.log','@DIR@/app/b.log','@FILEID:app/b.log@',1796143016000,87,150,87,'e15c6b2c94eee3b3664f83c0dfb3048238e54c949fdd4fdb0d363b934122118c',strftime('%Y-%m-%d %H:%M:%f','now'));
-- header of an older content (first 300 of 320 bytes of "old content 001\n..."); real file is 12 bytes
INSERT INTO FILE_CHECKPOINTS VALUES('dis:s1:@DIR@/app/*.log','@DIR@/app/c.log','@FILEID:app/c.log@',1796143015000,320,320,300,'ea72b88ca60987735e88d5990101a197501437cba914556877fe3a5e53806bef',strftime('%Y-%m-%d %H:%M:%f','now'));
COMMIT;
