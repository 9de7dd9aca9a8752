-- snowflake_nextval_block(n): n consecutive IDs of one tick, as an int8range
-- [first, first + n), above every ID issued before and below every later one.
SET TimeZone = 'UTC';

SELECT snowflake_nextval() AS before \gset
SELECT snowflake_nextval_block(100) AS block \gset
SELECT snowflake_nextval() AS after \gset
SELECT upper(:'block'::int8range) - lower(:'block'::int8range) AS ids,
       lower(:'block'::int8range) > :before AS above_before,
       :after >= upper(:'block'::int8range) AS below_after,
       (SELECT count(DISTINCT node) = 1 AND min(node) = 7 AND count(DISTINCT ts) = 1
        FROM generate_series(lower(:'block'::int8range), upper(:'block'::int8range) - 1) AS id,
             LATERAL snowflake_parse(id)) AS one_tick_of_node_7;

-- Blocks and single IDs mixed: 200 blocks of random sizes up to a whole tick, and single IDs.
CREATE TEMP TABLE issued AS
SELECT g, snowflake_nextval_block(1 + (hashint4(g) & 2147483647) % 4096) AS block, snowflake_nextval() AS single
FROM generate_series(1, 200) AS g;
SELECT count(*) AS blocks,
       bool_and(upper(block) - lower(block) BETWEEN 1 AND 4096) AS sizes_in_range,
       bool_and(lower(block) > prev_single) AS each_block_above_the_single_before,
       bool_and(single >= upper(block)) AS each_single_above_its_block
FROM (SELECT block, single, lag(single, 1, 0::bigint) OVER (ORDER BY g) AS prev_single FROM issued) AS o;
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
       bool_and(p.node = 7) AS all_node_7,
       bool_and(p.seq BETWEEN 0 AND 4095) AS seq_in_range
FROM (SELECT generate_series(lower(block), upper(block) - 1) AS id FROM issued
      UNION ALL SELECT single FROM issued) AS ids,
     LATERAL snowflake_parse(id) AS p;
-- The first and last ID of every block share a tick and a node.
SELECT bool_and(f.ts = l.ts AND f.node = l.node) AS blocks_stay_in_one_tick
FROM issued, LATERAL snowflake_parse(lower(block)) AS f, LATERAL snowflake_parse(upper(block) - 1) AS l;
-- A whole tick: all 4096 sequence numbers of node 7, from 0 to 4095.
SELECT f.seq AS first_seq, l.seq AS last_seq, l.node
FROM snowflake_nextval_block(4096) AS b, LATERAL snowflake_parse(lower(b)) AS f,
     LATERAL snowflake_parse(upper(b) - 1) AS l;
-- As a set of rows.
SELECT count(*) FROM generate_series(1, 3) AS g,
     LATERAL (SELECT snowflake_nextval_block(10) AS b) AS x,
     LATERAL generate_series(lower(b), upper(b) - 1) AS id;

-- A loop of whole-tick blocks borrows at most a sixteenth of max_clock_drift (62 ms of the
-- default 1 s) ahead of the clock, then waits for it: single calls keep the rest of the bound.
-- (0.5.0 let such a loop borrow the whole bound.)
SELECT count(*) AS blocks,
       bool_and(snowflake_timestamp(lower(b)) <= clock_timestamp() + interval '62 ms') AS within_their_share
FROM (SELECT snowflake_nextval_block(4096) AS b FROM generate_series(1, 300)) AS s;

-- Bad sizes: 22023, with the limit in the hint.
\set VERBOSITY default
SELECT snowflake_nextval_block(0);
\echo :SQLSTATE
SELECT snowflake_nextval_block(4097);
\echo :SQLSTATE
SELECT snowflake_nextval_block(-5);
\echo :SQLSTATE
SELECT snowflake_nextval_block(NULL) IS NULL AS null_is_null;

-- The 0.1.0 declaration of snowflake_stats(), with 17 columns, still works with this library.
CREATE FUNCTION pg_temp.stats_0_1_0(
    OUT node integer, OUT epoch timestamptz, OUT layout text,
    OUT last_id bigint, OUT last_id_time timestamptz, OUT reserved_until timestamptz,
    OUT ids_issued bigint, OUT exhaustions bigint, OUT clock_regressions bigint, OUT max_clock_drift_ms bigint,
    OUT waits bigint, OUT wait_time_ms bigint, OUT reservations bigint,
    OUT ids_per_second bigint, OUT runs_out_at timestamptz, OUT state text, OUT clock_offset_ms bigint)
AS '$libdir/snowflake', 'snowflake_stats' LANGUAGE C VOLATILE STRICT;
SELECT node, layout, ids_per_second, runs_out_at, state FROM pg_temp.stats_0_1_0();
