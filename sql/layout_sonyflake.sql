-- A server on the sonyflake layout: generation, decoding, time ranges, blocks,
-- backfill and settings all use 39 bits of 10 ms, 16 node bits and 8 sequence bits.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';
CREATE EXTENSION snowflake;
SHOW snowflake.layout;
SHOW snowflake.epoch; -- the preset's epoch, 2014-09-01, since none is configured
SELECT node, epoch, layout, layout_name, layout_spec, max_node, ids_per_second, runs_out_at, state
FROM snowflake_stats();

-- 3,000 IDs: rising, unique, on node 40000, on 10 ms ticks, close to now. 256 per tick at most,
-- so this many also borrows later ticks.
CREATE TEMP TABLE ids AS
SELECT g, clock_timestamp() AS asked, snowflake_nextval() AS id, clock_timestamp() AS made
FROM generate_series(1, 3000) AS g;
SELECT count(DISTINCT id) AS distinct_ids,
       bool_and(id > prev) AS rising,
       bool_and(p.node = 40000) AS node_40000,
       bool_and(p.seq BETWEEN 0 AND 255) AS seq_in_8_bits,
       bool_and(extract(milliseconds FROM p.ts)::numeric * 1000 % 10000 = 0) AS on_10ms_ticks,
       bool_and(p.ts > asked - interval '10 ms' AND p.ts <= made + interval '1 s') AS near_the_clock,
       bool_and((id >> 24) = ((extract(epoch FROM p.ts) * 1000)::bigint - 1409529600000) / 10) AS time_in_top_39_bits,
       bool_and(((id >> 8) & 65535) = 40000) AS node_in_bits_8_to_23
FROM (SELECT id, asked, made, lag(id, 1, 0::bigint) OVER (ORDER BY g) AS prev FROM ids) AS o,
     LATERAL snowflake_parse(id) AS p;
-- The explicit layout agrees with the active one.
SELECT bool_and(a.ts = e.ts AND a.node = e.node AND a.seq = e.seq) AS explicit_agrees
FROM ids, LATERAL snowflake_parse(id) AS a, LATERAL snowflake_parse(id, 'sonyflake') AS e;
SELECT bool_and(snowflake_timestamp(id) <> snowflake_timestamp(id, 'twitter')) AS twitter_reads_other_times FROM ids;

-- Time ranges work in ticks of 10 ms: every ID lies in the range of its own time.
SELECT snowflake_min_id('2014-09-01 00:00:01+00') = (100::bigint << 24) AS min_id_at_tick_100,
       snowflake_min_id('2014-09-01 00:00:01.001+00') = (101::bigint << 24) AS min_id_rounds_up,
       snowflake_max_id('2014-09-01 00:00:01.009+00') = (101::bigint << 24) - 1 AS max_id_rounds_down;
SELECT bool_and(id <@ tstzrange(snowflake_timestamp(id), snowflake_timestamp(id), '[]')) AS own_tick,
       bool_and(NOT id <@ tstzrange(snowflake_timestamp(id) + interval '1 ms', NULL)) AS not_after,
       bool_and(id BETWEEN snowflake_min_id(snowflake_timestamp(id))
                       AND snowflake_max_id(snowflake_timestamp(id) + interval '9 ms')) AS within_bounds
FROM ids;
SELECT snowflake_id_range(tstzrange('2014-09-01 00:00:01+00', '2014-09-01 00:00:01.02+00'))
     = int8range(100::bigint << 24, 102::bigint << 24) AS id_range_of_two_ticks;
SELECT snowflake_max_id('2188-11-16 03:28:58.87+00') = 9223372036854775807 AS last_tick,
       snowflake_max_id('2188-11-16 03:28:58.88+00') AS past_the_end;
\echo :SQLSTATE

-- Blocks hold up to 256 IDs here.
SELECT upper(b) - lower(b) AS ids, (snowflake_parse(lower(b))).node, (snowflake_parse(upper(b) - 1)).seq AS last_seq
FROM snowflake_nextval_block(256) AS b;
SELECT snowflake_nextval_block(257);
\echo :SQLSTATE

-- Backfill on node 65535, with 8-bit sequences.
SELECT (snowflake_parse(snowflake_backfill_id('2020-01-01 00:00:00.005+00', 255))).*;
SELECT snowflake_backfill_id('2020-01-01', 256);
\echo :SQLSTATE

-- Nodes up to 65535 are allowed, 65536 is not (the GUC's static maximum is larger).
ALTER SYSTEM SET snowflake.node = 65536;
\echo :SQLSTATE
ALTER SYSTEM SET snowflake.backfill_node = 70000;
\echo :SQLSTATE
SELECT count(*) AS auto_conf_lines FROM pg_file_settings WHERE name LIKE 'snowflake.%' AND sourcefile LIKE '%auto.conf';
-- The layout is restart-only and refuses nonsense.
SET snowflake.layout = 'twitter';
\echo :SQLSTATE
ALTER SYSTEM SET snowflake.layout = 'time=39,unit=10ms,node=16,seq=9';
\echo :SQLSTATE
ALTER SYSTEM SET snowflake.layout = 'sonyflake,epoch=0';
\echo :SQLSTATE
ALTER SYSTEM SET snowflake.layout = 'sonyflake,order=seq-node';
\echo :SQLSTATE
