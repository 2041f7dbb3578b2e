-- The board file, version 1.
--
-- The op log (`op`, with its dictionaries `replica`, `author` and `context`) is the truth.
-- Everything under "Derived" is rebuilt from it by `magnets check --repair`.
--
-- Keys: an op's key is (lamport << 16) | replica.id, where replica.id is this file's own small
-- number for the replica, so the op table is stored in replay order (up to the order of replica
-- ids within one Lamport number) and needs no other index. A magnet is named by
-- (replica.id << 32) | seq of the op that pulled it.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY NOT NULL,  -- 'board_id', 'replica' (this file's own), 'format'
    value TEXT NOT NULL
) WITHOUT ROWID;

-- Every replica whose ops the file holds: its version-vector entry and latest Lamport number.
CREATE TABLE replica (
    id      INTEGER PRIMARY KEY,
    name    TEXT NOT NULL UNIQUE,
    seq     INTEGER NOT NULL DEFAULT 0 CHECK (seq >= 0),
    lamport INTEGER NOT NULL DEFAULT 0 CHECK (lamport >= 0)
);

CREATE TABLE author (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

-- An op's vector clock without its own entry ('alice=3,bob=2'); consecutive ops share one.
CREATE TABLE context (
    id    INTEGER PRIMARY KEY,
    clock TEXT NOT NULL UNIQUE
);

-- The op log. kind: 1 board.create, 2 board.resize, 3 tray.add, 4 zone.add, 5 zone.remove,
-- 6 boundary.add, 7 boundary.remove, 8 magnet.pull, 9 magnet.move, 10 magnet.return.
-- magnet: the magnet a move or return names. x, y: a pull's or move's single target point.
-- data: the other payload fields as a JSON object (names, letters, paths …), NULL when none.
CREATE TABLE op (
    id      INTEGER PRIMARY KEY,        -- (lamport << 16) | replica.id
    seq     INTEGER NOT NULL CHECK (seq >= 1),
    context INTEGER NOT NULL REFERENCES context(id),
    author  INTEGER NOT NULL REFERENCES author(id),
    time    INTEGER NOT NULL,
    kind    INTEGER NOT NULL CHECK (kind BETWEEN 1 AND 10),
    magnet  INTEGER,
    x       REAL,
    y       REAL,
    data    TEXT
);

-- Derived ---------------------------------------------------------------------------------------

-- The outcome of each op whose events are not the plain ones its payload implies (a move to its
-- target with nothing else happening, a pull placed where asked): those are not stored.
CREATE TABLE outcome (
    op     INTEGER PRIMARY KEY,     -- the op's key
    events BLOB NOT NULL            -- the events, binary (see EventCoding in the store)
);

-- The board after the first `position` ops of the replay order, every 16384 ops.
CREATE TABLE checkpoint (
    position INTEGER PRIMARY KEY,
    lamport  INTEGER NOT NULL,      -- replay-order key of the last op folded in
    replica  TEXT NOT NULL,
    clock    TEXT NOT NULL,         -- the version vector of those ops ('alice=3,bob=2')
    board    TEXT NOT NULL          -- JSON snapshot
);

-- The current board.
CREATE TABLE board (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    present INTEGER NOT NULL,       -- 1 once board.create has been applied
    name    TEXT NOT NULL,
    width   REAL NOT NULL,
    height  REAL NOT NULL,
    top_z   INTEGER NOT NULL,
    ops     INTEGER NOT NULL        -- how many ops the log holds
);

CREATE TABLE magnet (
    id     INTEGER PRIMARY KEY,     -- the pulling op's id
    letter TEXT NOT NULL,
    color  TEXT NOT NULL,
    width  REAL NOT NULL,
    height REAL NOT NULL,
    x      REAL NOT NULL,
    y      REAL NOT NULL,
    zone   TEXT,
    z      INTEGER NOT NULL
);

CREATE TABLE zone (
    position INTEGER PRIMARY KEY,   -- creation order
    name     TEXT NOT NULL UNIQUE,
    x        REAL NOT NULL,
    y        REAL NOT NULL,
    width    REAL NOT NULL,
    height   REAL NOT NULL,
    capacity INTEGER NOT NULL,
    accepts  TEXT                   -- JSON array of colors, NULL for any
);

CREATE TABLE boundary (
    position INTEGER PRIMARY KEY,
    name     TEXT NOT NULL UNIQUE,
    from_x   REAL NOT NULL,
    from_y   REAL NOT NULL,
    to_x     REAL NOT NULL,
    to_y     REAL NOT NULL
);

CREATE TABLE tile (
    position  INTEGER PRIMARY KEY,  -- order first added
    letter    TEXT NOT NULL,
    color     TEXT NOT NULL,
    width     REAL NOT NULL,
    height    REAL NOT NULL,
    remaining INTEGER               -- NULL: unlimited
);
