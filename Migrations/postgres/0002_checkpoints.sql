-- Shared checkpoints of a board's derived state (DESIGN.md, "Boards in PostgreSQL").
--
-- A checkpoint is derived, never the truth: a process that meets a board starts from its
-- latest checkpoint and replays only the ops after it, and one whose image does not hash to
-- `digest`, or does not hold exactly the ops of `op` up to `n`, is deleted and made again.

-- A board's cache file after the ops with `n` up to `n` (an SQLite image of the board file, as
-- `VACUUM INTO` writes it), holding `ops` ops; `digest` is the SHA-256 of `image`. One row is
-- written in one transaction: a process killed while writing one leaves none.
CREATE TABLE board_checkpoint (
    board   TEXT NOT NULL REFERENCES board (name),
    n       BIGINT NOT NULL CHECK (n >= 0),
    ops     BIGINT NOT NULL CHECK (ops >= 0),
    digest  BYTEA NOT NULL,
    image   BYTEA NOT NULL,
    created BIGINT NOT NULL,
    PRIMARY KEY (board, n)
);
