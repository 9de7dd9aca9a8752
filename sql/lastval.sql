-- snowflake_lastval(): this session's last ID from snowflake_nextval(), as
-- lastval() is for sequences; an error before the first.
SELECT snowflake_lastval();
SELECT snowflake_nextval() AS id \gset
SELECT snowflake_lastval() = :id AS lastval_is_that_id;
-- A column default counts, and the value is what RETURNING gave.
CREATE TEMP TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), item text);
INSERT INTO orders (item) VALUES ('tea') RETURNING id AS inserted \gset
SELECT snowflake_lastval() = :inserted AS lastval_is_the_inserted_id;
-- A rolled-back ID stays this session's last, as with lastval().
BEGIN;
INSERT INTO orders (item) VALUES ('cake') RETURNING id AS rolled_back \gset
ROLLBACK;
SELECT snowflake_lastval() = :rolled_back AS lastval_survives_rollback;
-- Blocks do not change it.
SELECT count(*) AS blocks FROM snowflake_nextval_block(10);
SELECT snowflake_lastval() = :rolled_back AS lastval_unchanged_by_blocks;
