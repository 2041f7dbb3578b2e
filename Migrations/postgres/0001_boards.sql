-- Boards in PostgreSQL (SPEC §7, `magnets serve --postgres URL`), version 1.
--
-- The op log (`op`) is the truth; each server process keeps a board's derived state as a board
-- file of its own (a cache), caught up from `op` in the order of `n` before it answers.

-- A board the server hosts: its name in URLs, its id (shared by every copy), and the server's
-- replica id for it (shared by every process: its seqs are taken under the board's row lock).
CREATE TABLE board (
    name                TEXT PRIMARY KEY,
    id                  TEXT NOT NULL,
    replica             TEXT NOT NULL,
    checkpoint_interval INTEGER NOT NULL CHECK (checkpoint_interval >= 1),
    created             BIGINT NOT NULL
);

-- The op log: one row per op, its bundle line as `body`. The primary key means no two processes
-- can both accept one op; `n` orders a board's ops as they were committed (writes to a board are
-- serialised by its `board` row's lock, so a board's `n` grow in commit order).
CREATE TABLE op (
    board   TEXT NOT NULL REFERENCES board (name),
    replica TEXT NOT NULL,
    seq     INTEGER NOT NULL CHECK (seq >= 1),
    lamport BIGINT NOT NULL CHECK (lamport >= 1),
    n       BIGSERIAL NOT NULL,
    body    TEXT NOT NULL,
    PRIMARY KEY (board, replica, seq)
);
CREATE UNIQUE INDEX op_order ON op (board, n);

-- The tokens, as `server.sqlite` keeps them beside board files: only a SHA-256 hash is kept.
CREATE TABLE token (
    prefix    TEXT NOT NULL,
    hash      BYTEA NOT NULL UNIQUE,
    board     TEXT NOT NULL,
    read_only BOOLEAN NOT NULL,
    label     TEXT NOT NULL,
    created   BIGINT NOT NULL
);
CREATE INDEX token_prefix ON token (prefix);
