-- A server on the js53 layout with a custom epoch (2020-01-01 UTC): every ID is
-- below 2^53, so JavaScript numbers hold it exactly.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';
CREATE EXTENSION snowflake;
SHOW snowflake.layout;
SHOW snowflake.epoch;
SELECT node, epoch, layout, layout_name, layout_spec, max_node, ids_per_second, runs_out_at, state
FROM snowflake_stats();

-- 2,000 IDs (128 per millisecond at most): rising, unique, below 2^53, on node 17.
CREATE TEMP TABLE ids AS
SELECT g, clock_timestamp() AS asked, snowflake_nextval() AS id, clock_timestamp() AS made
FROM generate_series(1, 2000) AS g;
SELECT count(DISTINCT id) AS distinct_ids,
       bool_and(id > prev) AS rising,
       bool_and(id < 9007199254740992) AS below_2_53,
       bool_and(id::float8::bigint = id) AS exact_as_a_double,
       bool_and(p.node = 17) AS node_17,
       bool_and(p.seq BETWEEN 0 AND 127) AS seq_in_7_bits,
       bool_and(p.ts > asked - interval '1 ms' AND p.ts <= made + interval '1 s') AS near_the_clock
FROM (SELECT id, asked, made, lag(id, 1, 0::bigint) OVER (ORDER BY g) AS prev FROM ids) AS o,
     LATERAL snowflake_parse(id) AS p;
SELECT bool_and(a.ts = e.ts AND a.node = e.node AND a.seq = e.seq) AS explicit_agrees
FROM ids, LATERAL snowflake_parse(id) AS a, LATERAL snowflake_parse(id, 'js53,epoch=1577836800000') AS e;
-- JSON carries them as exact numbers.
SELECT bool_and((to_json(id)::text)::float8 = id::float8 AND (to_json(id)::text)::bigint = id) AS json_exact FROM ids;

-- Time ranges.
SELECT snowflake_min_id('2020-01-01 00:00:00.001+00') = (1::bigint << 12) AS min_id_of_ms_1,
       snowflake_max_id('2089-09-06 15:47:35.551+00') = 9007199254740991 AS last_id_is_2_53_minus_1;
SELECT snowflake_max_id('2089-09-06 15:47:35.552+00');
\echo :SQLSTATE
-- A range past the end is clamped to it: the same IDs as a range without an upper end.
SELECT snowflake_id_range('[2089-01-01, 2100-01-01)') = snowflake_id_range('[2089-01-01,)') AS clamped,
       count(*) FILTER (WHERE id <@ tstzrange('2089-09-06 15:47:35.551+00', '2100-01-01')) AS ids_in_the_last_tick
FROM (VALUES (9007199254740991), (9007199254740990), (9007199254740991 - 4096)) AS v(id);
SELECT bool_and(id <@ tstzrange(snowflake_timestamp(id), snowflake_timestamp(id), '[]')) AS own_ms FROM ids;

-- Blocks hold up to 128 IDs here.
SELECT upper(b) - lower(b) AS ids, (snowflake_parse(lower(b))).node, upper(b) < 9007199254740992 AS below_2_53
FROM snowflake_nextval_block(128) AS b;
SELECT snowflake_nextval_block(129);
\echo :SQLSTATE

-- IDs of another layout are refused rather than misread.
SELECT snowflake_timestamp(910499571847892992);
\echo :SQLSTATE

-- Nodes up to 31.
ALTER SYSTEM SET snowflake.node = 32;
\echo :SQLSTATE
ALTER SYSTEM SET snowflake.node = 31;
ALTER SYSTEM RESET snowflake.node;

-- Public IDs on js53: the mask permutes [0, 2^53), so masked IDs stay exact in JavaScript.
SET snowflake.mask_keys = 'A:2b7e151628aed2a6abf7158809cf4f3c';
SELECT x, snowflake_mask(x) AS masked, snowflake_mask_text(x) AS public_id
FROM unnest(ARRAY[0, 1, 4503599627370496, 9007199254740991]::bigint[]) x;
CREATE TEMP TABLE js_ids AS
SELECT snowflake_nextval() AS id FROM generate_series(1, 5000) UNION ALL SELECT 9007199254740991;
SELECT count(*) FILTER (WHERE snowflake_mask(id) >= 9007199254740992) AS masks_past_2_53,
       count(*) FILTER (WHERE snowflake_unmask(snowflake_mask(id)) <> id) AS mismatches,
       count(*) FILTER (WHERE snowflake_unmask_text(snowflake_mask_text(id)) <> id) AS text_mismatches,
       count(DISTINCT snowflake_mask(id)) = count(*) AS distinct_masks
FROM js_ids;
SELECT snowflake_mask(9007199254740992);
SELECT snowflake_unmask(9007199254740992);
SELECT snowflake_unmask_text('A00fFgnDxSe8'); -- 2^53
RESET snowflake.mask_keys;
