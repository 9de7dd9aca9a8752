-- snowflake_nextval() is PARALLEL SAFE: parallel workers share the one
-- generator in shared memory, so a parallel plan still yields distinct IDs.
CREATE TABLE parallel_rows AS SELECT g FROM generate_series(1, 200000) AS g;
ANALYZE parallel_rows;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;

CREATE FUNCTION pg_temp.plan(options text, query text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  plan json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON, ' || options || ') ' || query INTO plan;
  RETURN plan;
END $$;
\set query 'SELECT count(*), count(DISTINCT id) FROM (SELECT snowflake_nextval() AS id FROM parallel_rows) AS s'

-- The function runs below the Gather, in the workers: the parallel scan computes it. (Read from the
-- JSON plan, since the nodes around it differ by version: PG16+ sorts below a Gather Merge.)
SELECT jsonb_path_exists(pg_temp.plan('VERBOSE, COSTS OFF', :'query'),
  '$.** ? (@."Node Type" starts with "Gather").** ? (@."Parallel Aware" == true && @."Output" == "snowflake_nextval()")')
  AS computed_by_workers;

-- Workers really start, and together they produce distinct IDs.
SELECT jsonb_path_query_first(pg_temp.plan('ANALYZE', :'query'), '$.**."Workers Launched"')::int > 0 AS workers_launched;
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids
FROM (SELECT snowflake_nextval() AS id FROM parallel_rows) AS s;
DROP TABLE parallel_rows;
