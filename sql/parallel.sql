-- snowflake_nextval() is PARALLEL SAFE: parallel workers share the one
-- generator in shared memory, so a parallel plan still yields distinct IDs.
CREATE TABLE parallel_rows AS SELECT g FROM generate_series(1, 200000) AS g;
ANALYZE parallel_rows;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;

-- The function runs below the Gather, in the workers.
EXPLAIN (COSTS OFF, VERBOSE)
SELECT count(*), count(DISTINCT id) FROM (SELECT snowflake_nextval() AS id FROM parallel_rows) AS s;

-- Workers really start, and together they produce distinct IDs.
CREATE FUNCTION pg_temp.workers_launched(query text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || query INTO plan;
  RETURN (plan -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Workers Launched')::int;
END $$;
SELECT pg_temp.workers_launched(
  'SELECT count(*), count(DISTINCT id) FROM (SELECT snowflake_nextval() AS id FROM parallel_rows) AS s') > 0
  AS workers_launched;
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids
FROM (SELECT snowflake_nextval() AS id FROM parallel_rows) AS s;
DROP TABLE parallel_rows;
