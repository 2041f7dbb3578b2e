-- The board file, version 3.
--
-- * `op.kind` takes any code the program knows (the kinds are listed once, in the store's Swift
--   table `OpKind`): adding a kind needs no rebuild of the table. The table is rebuilt once here
--   to drop the old `CHECK (kind BETWEEN 0 AND 9)`.
-- * An index finds an op by (replica, seq): the replica's local number is the low 16 bits of the
--   op key. Admission uses it to check each incoming op's Lamport number against the ops its
--   clock covers (SPEC §4), and undo to find the op it names.

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

CREATE INDEX op_by_replica_seq ON op (id & 65535, seq);

UPDATE meta SET value = '3' WHERE key = 'format';
