-- snowflake.clock_policy = wait: no ID carries a time later than the clock
-- when it was issued (a full millisecond is waited out, not borrowed). Whether
-- this run fills a millisecond depends on the machine's speed; the unit tests
-- drive the waiting step itself with an injected clock.
CREATE EXTENSION snowflake;
SHOW snowflake.clock_policy;
CREATE TEMP TABLE ids AS
SELECT n, snowflake_nextval() AS id, clock_timestamp() AS after FROM generate_series(1, 100000) AS n;
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids FROM ids;
SELECT bool_and(id > previous) AS strictly_increasing
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS previous FROM ids) AS s WHERE previous IS NOT NULL;
SELECT bool_and(p.node = 12) AS all_node_12, bool_and(p.ts <= ids.after) AS never_ahead_of_clock
FROM ids, LATERAL snowflake_parse(id) AS p;
