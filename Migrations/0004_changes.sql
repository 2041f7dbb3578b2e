-- The board file, version 4.
--
-- * `change` (derived, like `magnet` or `zone`): for each subject of the board ever changed (a
--   magnet, a tile, a zone or boundary name, the board), the last op that changed it and what
--   that op found there — what an undo of it restores (SPEC §9). One row per subject, never one
--   per op. The row's bytes are the store's `ChangeCoding`. A file from an earlier version has
--   its derived tables rebuilt by replaying its log once, when this migration runs.

CREATE TABLE change (
    subject TEXT PRIMARY KEY NOT NULL,   -- 'magnet alice-3', 'tile A red', 'zone slot', 'boundary floor', 'board'
    record  BLOB NOT NULL
) WITHOUT ROWID;

UPDATE meta SET value = '4' WHERE key = 'format';
