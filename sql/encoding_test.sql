-- Text encodings: fixed widths, exact round trips, order under the "C"
-- collation of snowflake_code (and how a linguistic collation would break
-- base62), Crockford's aliases, and every kind of malformed input (22P02).
SELECT snowflake_to_base32(0) AS b32_zero, snowflake_to_base62(0) AS b62_zero, snowflake_to_hex(0) AS hex_zero;
SELECT snowflake_to_base32(9223372036854775807) AS b32_max, snowflake_to_base62(9223372036854775807) AS b62_max,
       snowflake_to_hex(9223372036854775807) AS hex_max;
SELECT snowflake_to_base32(910499571847892992) AS b32, snowflake_to_base62(910499571847892992) AS b62,
       snowflake_to_hex(910499571847892992) AS hex;
SELECT pg_typeof(snowflake_to_base62(1)) AS type, pg_collation_for(snowflake_to_base62(1)) AS collation;

-- Round trips and order over IDs spread across the whole range, plus real ones.
CREATE TEMP TABLE ids AS
SELECT DISTINCT id FROM (
    SELECT (random() * 9223372036854775807)::bigint AS id FROM generate_series(1, 20000)
    UNION ALL SELECT (2::numeric ^ g)::bigint - d FROM generate_series(0, 62) g, generate_series(0, 1) d
    UNION ALL SELECT 9223372036854775807
    UNION ALL SELECT snowflake_nextval() FROM generate_series(1, 5000)) s
WHERE id >= 0;
SELECT count(*) FILTER (WHERE snowflake_from_base32(snowflake_to_base32(id)) <> id) AS base32_mismatches,
       count(*) FILTER (WHERE snowflake_from_base62(snowflake_to_base62(id)) <> id) AS base62_mismatches,
       count(*) FILTER (WHERE snowflake_from_hex(snowflake_to_hex(id)) <> id) AS hex_mismatches,
       count(DISTINCT length(snowflake_to_base32(id))) AS base32_widths,
       count(DISTINCT length(snowflake_to_base62(id))) AS base62_widths,
       count(DISTINCT length(snowflake_to_hex(id))) AS hex_widths
FROM ids;
-- Sorting the codes gives the IDs' order: compare each ID's rank both ways.
SELECT count(*) FILTER (WHERE by_id <> by_b32) AS base32_out_of_order,
       count(*) FILTER (WHERE by_id <> by_b62) AS base62_out_of_order,
       count(*) FILTER (WHERE by_id <> by_hex) AS hex_out_of_order
FROM (SELECT row_number() OVER (ORDER BY id) AS by_id,
             row_number() OVER (ORDER BY snowflake_to_base32(id)) AS by_b32,
             row_number() OVER (ORDER BY snowflake_to_base62(id)) AS by_b62,
             row_number() OVER (ORDER BY snowflake_to_hex(id)) AS by_hex
      FROM ids) r;
-- Stored in a snowflake_code column the "C" collation travels with the codes, and so does the order.
CREATE TEMP TABLE codes AS SELECT id, snowflake_to_base62(id) AS code FROM ids;
SELECT count(*) FILTER (WHERE by_id <> by_code) AS stored_out_of_order
FROM (SELECT row_number() OVER (ORDER BY id) AS by_id, row_number() OVER (ORDER BY code) AS by_code FROM codes) r;
-- Why the "C" collation: under a linguistic collation, base62's mixed case sorts differently.
SELECT (SELECT array_agg(id ORDER BY snowflake_to_base62(id)) FROM (VALUES (10::bigint), (36)) v(id)) AS c_order,
       (SELECT array_agg(id ORDER BY snowflake_to_base62(id)::text COLLATE "und-x-icu") FROM (VALUES (10::bigint), (36)) v(id))
           AS icu_order;

-- Crockford base32 decoding accepts lowercase and the look-alikes I, L (1) and O (0).
SELECT snowflake_from_base32('0ca2be895c239') = snowflake_from_base32('0CA2BE895C239') AS lowercase,
       snowflake_from_base32('000000000000I') AS i, snowflake_from_base32('000000000000l') AS l,
       snowflake_from_base32('00000000000oO') AS o,
       snowflake_from_hex('0CA2BE895C239000') = 910499571847892992 AS hex_uppercase,
       snowflake_from_base62('0000000000a') AS b62_a, snowflake_from_base62('0000000000A') AS b62_upper_a;

-- Malformed input: 22P02. Negative IDs: 22023.
\set ON_ERROR_STOP 0
SELECT snowflake_from_base32('');
\echo :SQLSTATE
SELECT snowflake_from_base32('00000000000000');
\echo :SQLSTATE
SELECT snowflake_from_base32('000000000000U');
\echo :SQLSTATE
SELECT snowflake_from_base32('0000-00000000');
\echo :SQLSTATE
SELECT snowflake_from_base32('8000000000000');
\echo :SQLSTATE
SELECT snowflake_from_base62('0000000000');
\echo :SQLSTATE
SELECT snowflake_from_base62('00000000_00');
\echo :SQLSTATE
SELECT snowflake_from_base62('AzL8n0Y58m8');
\echo :SQLSTATE
SELECT snowflake_from_hex('0x00000000000000');
\echo :SQLSTATE
SELECT snowflake_from_hex('ffffffffffffffff');
\echo :SQLSTATE
SELECT snowflake_from_hex('00000000000000é');
\echo :SQLSTATE
SELECT snowflake_from_hex(' 0000000000000ff');
\echo :SQLSTATE
SELECT snowflake_to_base32(-1);
\echo :SQLSTATE
SELECT snowflake_to_base62(-9223372036854775808);
\echo :SQLSTATE
SELECT snowflake_to_hex(-1);
\echo :SQLSTATE
\set ON_ERROR_STOP 1
SELECT snowflake_to_hex(NULL) IS NULL AND snowflake_from_hex(NULL) IS NULL AS strict;
