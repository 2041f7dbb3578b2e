-- The board file, version 3.
--
-- * `op.kind` takes any code the program knows (the kinds are listed once, in the store's Swift
--   table `OpKind`): adding a kind needs no rebuild of the table. The table is rebuilt once here
--   to drop the old `CHECK (kind BETWEEN 0 AND 9)`.
-- * `op_run.first_lamport`: the Lamport number of a run's first op. A run's ops share their
--   context, so each one's Lamport number is the one before's + 1 (SPEC §4): an op's Lamport
--   number, and so its key, follows from its replica and seq without an index.

CREATE TABLE op_v3 (
    id      INTEGER PRIMARY KEY,          -- (lamport << 16) | replica.id
    seq     INTEGER NOT NULL CHECK (seq >= 1),
    time    INTEGER NOT NULL,
    kind    INTEGER NOT NULL CHECK (kind >= 0),
    magnet  INTEGER,                      -- (seq << 16) | replica.id of the pulling op
    x       REAL,
    y       REAL,
    data    TEXT
);

INSERT INTO op_v3 (id, seq, time, kind, magnet, x, y, data)
SELECT id, seq, time, kind, magnet, x, y, data FROM op;

DROP TABLE op;
ALTER TABLE op_v3 RENAME TO op;

ALTER TABLE op_run ADD COLUMN first_lamport INTEGER NOT NULL DEFAULT 0;

-- Filled through a temporary index, so that each run's first op is found by (replica, seq).
CREATE INDEX op_by_replica_seq ON op (id & 65535, seq);
UPDATE op_run SET first_lamport = coalesce(
    (SELECT op.id >> 16 FROM op WHERE op.id & 65535 = op_run.replica AND op.seq = op_run.first_seq), 0);
DROP INDEX op_by_replica_seq;

UPDATE meta SET value = '3' WHERE key = 'format';
