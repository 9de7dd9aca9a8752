-- Parallel plans. snowflake_nextval() is PARALLEL RESTRICTED: it runs in the
-- leader, above the Gather, so snowflake_lastval() is the statement's last ID
-- (0.4.0 ran it in the workers, and lastval was the leader's own, not max(id)).
-- snowflake_nextval_block() is PARALLEL SAFE: workers share the one generator
-- in shared memory, so blocks drawn by workers are still distinct.
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
\set query 'SELECT snowflake_nextval() AS id, g FROM parallel_rows'

-- The scan is parallel, and the function is computed above it, by the leader. (Read from the JSON
-- plan, since the nodes around it differ by version.)
SELECT jsonb_path_exists(pg_temp.plan('VERBOSE, COSTS OFF', :'query'),
  '$.** ? (@."Node Type" starts with "Gather").** ? (@."Parallel Aware" == true)') AS scan_is_parallel,
  jsonb_path_exists(pg_temp.plan('VERBOSE, COSTS OFF', :'query'),
  '$.** ? (@."Output".type() == "array" && @."Output"[*] == "snowflake_nextval()" && @."Parallel Aware" == true)')
  AS computed_by_workers;

-- The issue's steps: CREATE TABLE AS over a parallel scan; lastval is then the largest ID made.
CREATE TABLE parallel_ids AS SELECT snowflake_nextval() AS id, g FROM parallel_rows;
SELECT snowflake_lastval() = (SELECT max(id) FROM parallel_ids) AS lastval_is_max_id,
       count(*) AS ids, count(DISTINCT id) AS distinct_ids FROM parallel_ids;

-- Blocks are computed by the workers, which really start, and their IDs are distinct.
\set blocks 'SELECT lower(snowflake_nextval_block(3)) AS first FROM parallel_rows'
SELECT jsonb_path_exists(pg_temp.plan('VERBOSE, COSTS OFF', :'blocks'),
  '$.** ? (@."Node Type" starts with "Gather").** ? (@."Parallel Aware" == true && @."Output"[*] like_regex "snowflake_nextval_block")')
  AS blocks_computed_by_workers;
SELECT jsonb_path_query_first(pg_temp.plan('ANALYZE', :'blocks'), '$.**."Workers Launched"')::int > 0 AS workers_launched;
SELECT count(*) AS blocks, bool_and(gap >= 3) AS none_overlap
FROM (SELECT lead(first) OVER (ORDER BY first) - first AS gap
      FROM (SELECT lower(snowflake_nextval_block(3)) AS first FROM parallel_rows) AS b) AS s;
DROP TABLE parallel_rows, parallel_ids;
