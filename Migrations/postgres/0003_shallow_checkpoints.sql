-- A checkpoint's shallow image (DESIGN.md, "A shallow start"), beside its whole one.
--
-- `shallow` is the checkpoint's board file without its log (the board's state, the replicas'
-- version vector and Lamport numbers, the file's identity), whose size does not grow with the
-- log; `shallow_digest` is its SHA-256, and `clock` the version vector it says it holds (as
-- `alice=3,bob=2`). A process meeting the board reads these alone first, and answers `show`
-- from them while the whole image loads. Rows written before this migration have none of them
-- (NULL): a process starts from their whole image, as before.
ALTER TABLE board_checkpoint ADD COLUMN clock TEXT;
ALTER TABLE board_checkpoint ADD COLUMN shallow BYTEA;
ALTER TABLE board_checkpoint ADD COLUMN shallow_digest BYTEA;
