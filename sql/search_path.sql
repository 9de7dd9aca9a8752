-- Every function of the extension works when it is installed in a schema off
-- the search_path: each is called schema-qualified with search_path =
-- pg_catalog, and the functions no call reached are listed at the end.
CREATE DATABASE snowflake_off_path;
\c snowflake_off_path
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';
CREATE SCHEMA ext;
CREATE EXTENSION snowflake SCHEMA ext;
CREATE TABLE public.items (id bigint PRIMARY KEY DEFAULT ext.snowflake_nextval(), typed ext.snowflake);
CREATE TABLE public.legacy (id serial PRIMARY KEY);
INSERT INTO public.legacy DEFAULT VALUES;
CREATE VIEW public.legacy_ids AS SELECT id FROM public.legacy;
SET search_path = pg_catalog;

BEGIN;
INSERT INTO public.items (typed) SELECT ext.snowflake_nextval() FROM generate_series(1, 3);
SELECT lower(ext.snowflake_nextval_block(4)) > 0 AS block, ext.snowflake_lastval() > 0 AS lastval;
SELECT node, state FROM ext.snowflake_stats();
SELECT role, node, problem FROM ext.snowflake_cluster_nodes();
SELECT ext.snowflake_inject_clock_offset(0);
SELECT ext.snowflake_inject_write_delay(0);
SELECT lead_ms > 0 AS lead FROM ext.snowflake_reservation();
SELECT ext.snowflake_timestamp(910499571847892992) AS ts;
SELECT (ext.snowflake_parse(910499571847892992)).node;
SELECT ext.snowflake_timestamp(256, 'sonyflake') AS sonyflake_ts;
SELECT (ext.snowflake_parse(256, 'sonyflake')).node AS sonyflake_node;
SELECT name, nodes FROM ext.snowflake_layout('js53');
SELECT ext.snowflake_min_id('2024-01-01') <= ext.snowflake_max_id('2024-01-01') AS bounds;
SELECT ext.snowflake_id_range('[2024-01-01,2024-01-02)') = int8range(ext.snowflake_range_first_id('[2024-01-01,2024-01-02)'),
       ext.snowflake_range_last_id('[2024-01-01,2024-01-02)'), '[]') AS range_ends;
-- Volatile arguments keep the planner from rewriting the calls, so the C functions run.
SELECT ext.snowflake_between(ext.snowflake_nextval(), tstzrange(clock_timestamp() - interval '1 hour', NULL)) AS recent,
       ext.snowflake_nextval()::ext.snowflake OPERATOR(ext.<@) tstzrange(clock_timestamp() - interval '1 hour', NULL) AS typed_recent;
SELECT count(*) AS typed_in_range FROM public.items WHERE typed OPERATOR(ext.<@) '[2024-01-01,)';
SELECT (ext.snowflake_parse(ext.snowflake_backfill_id('2015-06-01 12:00:00.123+00', 42))).node AS backfill_node;
SELECT ext.snowflake_from_base32(ext.snowflake_to_base32(42)) AS base32,
       ext.snowflake_from_base62(ext.snowflake_to_base62(42)) AS base62,
       ext.snowflake_from_hex(ext.snowflake_to_hex(42)) AS hex;
SELECT node, origin, ids, shared_node FROM ext.snowflake_node_origins('public.items');
SELECT ext.snowflake_convert_column('public.legacy', 'id');
SET snowflake.mask_keys = 'A:2b7e151628aed2a6abf7158809cf4f3c';
SELECT ext.snowflake_unmask(ext.snowflake_mask(42)) AS unmasked,
       ext.snowflake_unmask_text(ext.snowflake_mask_text(42)) AS unmasked_text;
RESET snowflake.mask_keys;
SELECT epoch_ms IS NOT NULL AND layout IS NOT NULL AS layout_on_record FROM ext.snowflake_layout_on_record();
SELECT p.oid::regprocedure AS not_called
FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
WHERE d.refclassid = 'pg_extension'::regclass AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')
  AND p.prolang <> (SELECT oid FROM pg_language WHERE lanname = 'internal')
  AND NOT EXISTS (SELECT FROM pg_stat_xact_user_functions s WHERE s.funcid = p.oid AND s.calls > 0)
ORDER BY 1::text;
COMMIT;

\c contrib_regression
DROP DATABASE snowflake_off_path;
