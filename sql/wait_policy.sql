-- snowflake.clock_policy = wait: when a millisecond's 4,096 IDs are used up,
-- snowflake_nextval() sleeps into the next one instead of borrowing it, so no
-- ID carries a time later than the clock when it was issued.
CREATE EXTENSION snowflake;
SHOW snowflake.clock_policy;
CREATE TEMP TABLE ids AS
SELECT n, snowflake_nextval() AS id, clock_timestamp() AS after FROM generate_series(1, 100000) AS n;
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids FROM ids;
SELECT bool_and(id > previous) AS strictly_increasing
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS previous FROM ids) AS s WHERE previous IS NOT NULL;
SELECT bool_and(p.node = 12) AS all_node_12, bool_and(p.ts <= ids.after) AS never_ahead_of_clock
FROM ids, LATERAL snowflake_parse(id) AS p;
