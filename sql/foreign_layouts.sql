-- Decoding IDs of other layouts and epochs with the explicit-layout functions,
-- which depend on their arguments alone (IMMUTABLE), and describing layouts.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';

-- The presets.
SELECT name, spec, time_bits, unit, node_bits, seq_bits, epoch, nodes, ids_per_second, runs_out_at
FROM unnest(ARRAY['twitter', 'sonyflake', 'js53']) AS l, LATERAL snowflake_layout(l);
-- Explicit widths equal to a preset's are that preset; an epoch may follow.
SELECT name, spec FROM snowflake_layout('time=39,unit=10ms,node=16,seq=8,epoch=1409529600000');
SELECT name, spec, runs_out_at FROM snowflake_layout('twitter,node=12,seq=10');
SELECT name, unit, ids_per_second, runs_out_at FROM snowflake_layout('time=32,unit=1s,node=21,seq=10');

-- The Twitter worked example decodes the same with the explicit twitter layout.
SELECT * FROM snowflake_parse(910499571847892992, 'twitter');
SELECT snowflake_timestamp(910499571847892992, 'twitter') = snowflake_timestamp(910499571847892992) AS same;
-- Another epoch moves the time by exactly the difference.
SELECT snowflake_timestamp(910499571847892992, 'twitter,epoch=1288834974658')
     - snowflake_timestamp(910499571847892992) AS shift;

-- A sonyflake-layout ID: tick 100 (1 s after the epoch, 10 ms each), machine 40000, sequence 5.
SELECT * FROM snowflake_parse((100::bigint << 24) | (40000 << 8) | 5, 'sonyflake');
SELECT * FROM snowflake_parse((100::bigint << 24) | (40000 << 8) | 5, 'sonyflake,epoch=0');
-- The Sonyflake library puts its sequence above the machine ID: order=seq-node decodes its IDs.
SELECT * FROM snowflake_parse((100::bigint << 24) | (5 << 16) | 40000, 'sonyflake,order=seq-node');
SELECT spec FROM snowflake_layout('sonyflake,order=seq-node');
-- A js53 ID: the largest one there is, 2^53 - 1, and one past it.
SELECT * FROM snowflake_parse(9007199254740991, 'js53');
SELECT * FROM snowflake_parse(9007199254740992, 'js53');
\echo :SQLSTATE
-- 10,000 scattered IDs below 2^53 round-trip through js53's fields.
SELECT count(*) AS ids,
       count(*) FILTER (WHERE ((((extract(epoch FROM p.ts) * 1000)::bigint - 1288834974657) << 12)
                               | (p.node::bigint << 7) | p.seq) = id) AS round_trips
FROM (SELECT ((hashint8(g)::bigint << 32) | (hashint8(-g)::bigint & 4294967295)) & 9007199254740991 AS id
      FROM generate_series(1, 10000) AS g) AS ids,
     LATERAL snowflake_parse(id, 'js53') AS p;

-- IMMUTABLE: an expression index on foreign IDs.
CREATE TABLE imported (id bigint PRIMARY KEY);
CREATE INDEX imported_time ON imported (snowflake_timestamp(id, 'sonyflake'));
INSERT INTO imported VALUES ((100::bigint << 24) | (40000 << 8) | 5);
SELECT snowflake_timestamp(id, 'sonyflake') FROM imported;
DROP TABLE imported;

-- NULL in, NULL out.
SELECT snowflake_timestamp(NULL, 'twitter') IS NULL AS null_id, snowflake_timestamp(1, NULL) IS NULL AS null_layout;

-- Nonsense layouts: 22023, with what is wrong and a hint.
\set VERBOSITY default
SELECT snowflake_timestamp(1, 'snowflake');
\echo :SQLSTATE
SELECT snowflake_timestamp(1, 'time=41,unit=1ms,node=10,seq=11');
\echo :SQLSTATE
SELECT * FROM snowflake_parse(1, 'time=63,unit=1ms,node=0,seq=0');
\echo :SQLSTATE
SELECT * FROM snowflake_layout('time=39,unit=5ms,node=16,seq=8');
\echo :SQLSTATE
SELECT * FROM snowflake_layout('time=51,unit=1ms,node=1,seq=11');
\echo :SQLSTATE
SELECT * FROM snowflake_layout('time=1,unit=1ms,node=31,seq=31');
\echo :SQLSTATE
SELECT * FROM snowflake_layout('twitter,colour=blue');
\echo :SQLSTATE
SELECT * FROM snowflake_layout('sonyflake,order=seq');
\echo :SQLSTATE
SELECT * FROM snowflake_layout('twitter,epoch=-1');
\echo :SQLSTATE
SELECT * FROM snowflake_layout('');
\echo :SQLSTATE
SELECT snowflake_timestamp(-1, 'twitter');
\echo :SQLSTATE
