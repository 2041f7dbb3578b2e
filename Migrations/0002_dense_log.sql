-- The board file, version 2: a denser log, and outcomes kept in pages.
--
-- * `op` no longer repeats its context and author on every row: a replica's ops come in runs
--   that share both (everything one person did between two syncs), and `op_run` holds one row
--   per run. The context and author of op (replica, seq) are those of the run with the largest
--   `first_seq` ≤ seq.
-- * Kind codes are renumbered so that the commonest ops take the fewest bytes (SQLite stores the
--   integers 0 and 1 in the record header alone): 0 magnet.move, 1 magnet.pull, 2 magnet.return,
--   3 board.create, 4 board.resize, 5 tray.add, 6 zone.add, 7 zone.remove, 8 boundary.add,
--   9 boundary.remove.
-- * A magnet is named (seq << 16) | replica.id of the op that pulled it (three bytes for the first
--   127 magnets of a replica, where (replica << 32) | seq took six).
-- * Outcomes move from one row per op to `outcome_page`: runs of consecutive outcomes in replay
--   order, one row each (see OutcomePages in the store); zone and boundary names in them are
--   numbers from `label`. The pages are rebuilt by replaying the log right after this script.

CREATE TABLE op_run (
    replica   INTEGER NOT NULL,           -- replica.id
    first_seq INTEGER NOT NULL CHECK (first_seq >= 1),
    context   INTEGER NOT NULL REFERENCES context(id),
    author    INTEGER NOT NULL REFERENCES author(id),
    PRIMARY KEY (replica, first_seq)
) WITHOUT ROWID;

INSERT INTO op_run (replica, first_seq, context, author)
SELECT replica, seq, context, author FROM (
    SELECT id & 65535 AS replica, seq, context, author,
           lag(context) OVER w AS previous_context, lag(author) OVER w AS previous_author
    FROM op
    WINDOW w AS (PARTITION BY id & 65535 ORDER BY seq)
)
WHERE previous_context IS NULL OR previous_context != context OR previous_author != author;

CREATE TABLE op_v2 (
    id      INTEGER PRIMARY KEY,          -- (lamport << 16) | replica.id
    seq     INTEGER NOT NULL CHECK (seq >= 1),
    time    INTEGER NOT NULL,
    kind    INTEGER NOT NULL CHECK (kind BETWEEN 0 AND 9),
    magnet  INTEGER,                      -- (seq << 16) | replica.id of the pulling op
    x       REAL,
    y       REAL,
    data    TEXT
);

INSERT INTO op_v2 (id, seq, time, kind, magnet, x, y, data)
SELECT id, seq, time,
       CASE kind WHEN 9 THEN 0 WHEN 8 THEN 1 WHEN 10 THEN 2 ELSE kind + 2 END,
       CASE WHEN magnet IS NULL THEN NULL ELSE ((magnet & 4294967295) << 16) | (magnet >> 32) END,
       x, y, data
FROM op;

DROP TABLE op;
ALTER TABLE op_v2 RENAME TO op;

-- Renumber magnets through negative ids, so no new id meets an old one on the way.
UPDATE magnet SET id = -(((id & 4294967295) << 16) | (id >> 32));
UPDATE magnet SET id = -id;

DROP TABLE outcome;

-- Zone and boundary names, as outcomes refer to them.
CREATE TABLE label (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

-- The outcomes of ops whose events are not the plain ones their payload implies, in replay
-- order: each row a run of them, keyed by the first one's op key. Derived.
CREATE TABLE outcome_page (
    first   INTEGER PRIMARY KEY,
    entries BLOB NOT NULL
);

UPDATE meta SET value = '2' WHERE key = 'format';
