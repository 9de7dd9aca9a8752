-- Edges found by a review and by real drivers (issue 13): the planner rewrite
-- of volatile ranges, <@ on the snowflake type, the node's range in
-- pg_settings, the hint of SET, and layouts refused at ALTER SYSTEM time.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';

-- How often a text occurs in the EXPLAIN VERBOSE output of a query (plans hold OIDs; counts do not).
CREATE FUNCTION pg_temp.plan_count(query text, what text) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  line text;
  n integer := 0;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || query LOOP
    n := n + (length(line) - length(replace(line, what, ''))) / length(what);
  END LOOP;
  RETURN n;
END
$$;

CREATE TABLE edge_ids (id bigint PRIMARY KEY, typed snowflake UNIQUE);
INSERT INTO edge_ids
SELECT snowflake_min_id(t) + g, snowflake_min_id(t) + g
FROM generate_series(timestamptz '2024-01-01', '2024-01-03', interval '1 hour') t, generate_series(0, 3) g;
ANALYZE edge_ids;

-- A volatile range is left alone: clock_timestamp() appears twice (as written), not four times.
SELECT pg_temp.plan_count($$SELECT id FROM edge_ids
  WHERE id <@ tstzrange(clock_timestamp() - interval '1 hour', clock_timestamp())$$, 'clock_timestamp()') AS clock_calls,
       pg_temp.plan_count($$SELECT id FROM edge_ids
  WHERE id <@ tstzrange(clock_timestamp() - interval '1 hour', clock_timestamp())$$, 'snowflake_range_first_id') AS rewritten;
-- A stable one (now()) is still rewritten into an ID range.
SELECT pg_temp.plan_count($$SELECT id FROM edge_ids
  WHERE id <@ tstzrange(now() - interval '1 hour', now())$$, 'snowflake_range_first_id') AS rewritten_with_now;

-- <@ on a snowflake column with an untyped literal, as drivers send parameters: its own operator,
-- the same rewrite, the same index.
SELECT count(*) AS in_day FROM edge_ids WHERE typed <@ '[2024-01-01,2024-01-02)';
SELECT count(*) AS in_day_bigint FROM edge_ids WHERE id <@ '[2024-01-01,2024-01-02)';
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT pg_temp.plan_count($$SELECT typed FROM edge_ids WHERE typed <@ '[2024-01-01,2024-01-02)'$$,
                          'Index Only Scan using edge_ids_typed_key') AS typed_index_scans,
       pg_temp.plan_count($$SELECT typed FROM edge_ids WHERE typed <@ '[2024-01-01,2024-01-02)'$$,
                          'snowflake_between') AS left_unrewritten;
PREPARE typed_day(tstzrange) AS SELECT count(*) FROM edge_ids WHERE typed <@ $1;
EXECUTE typed_day('[2024-01-02,2024-01-03)');
DEALLOCATE typed_day;
RESET enable_seqscan;
RESET enable_bitmapscan;
-- On a plain bigint, an untyped range literal is a time range too (the extension's operator):
-- integers in it are not times. An ID range takes an explicit int8range.
\set VERBOSITY default
SELECT count(*) FROM edge_ids WHERE id <@ '[1,10)';
\echo :SQLSTATE
SELECT count(*) AS small_ids FROM edge_ids WHERE id <@ '[1,10)'::int8range;

-- snowflake.node's range is the layout's: -1 (unset) to 1023 on twitter.
SELECT name, min_val, max_val, context FROM pg_settings
WHERE name IN ('snowflake.node', 'snowflake.backfill_node') ORDER BY name;

-- SET is refused with a hint saying where the setting goes.
SET snowflake.node = 3;
\echo :SQLSTATE
RESET snowflake.max_clock_drift;
\echo :SQLSTATE
SET snowflake.layout = 'js53';
\echo :SQLSTATE

-- A layout the next start would refuse (its time field ran out long ago) is refused now.
ALTER SYSTEM SET snowflake.layout = 'time=20,unit=1s,node=20,seq=23';
\echo :SQLSTATE
-- A usable one is accepted (and taken back: it only applies at the next start).
ALTER SYSTEM SET snowflake.layout = 'sonyflake';
\echo :SQLSTATE
ALTER SYSTEM RESET snowflake.layout;
SELECT count(*) AS auto_conf_lines FROM pg_file_settings WHERE name LIKE 'snowflake.%' AND sourcefile LIKE '%auto.conf';
\set VERBOSITY terse

-- snowflake_stats().state: ok here (its other values are in unset_node and the integration tests).
SELECT state FROM snowflake_stats();
DROP TABLE edge_ids;
