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

-- A clock step back within max_clock_drift (1 s) is waited out: the call
-- returns only once the moved clock has passed the last ID.
SELECT snowflake_nextval() AS before \gset
SELECT snowflake_inject_clock_offset(-300);
SELECT snowflake_nextval() AS after, clock_timestamp() - interval '300 ms' AS moved_clock \gset
SELECT :after > :before AS larger, snowflake_timestamp(:after) <= :'moved_clock' AS issued_after_the_wait;

-- Waiting answers statement_timeout (and query cancel) like any other wait.
SELECT snowflake_inject_clock_offset(-900);
SET statement_timeout = '100ms';
SELECT snowflake_nextval();
\echo :SQLSTATE
RESET statement_timeout;

-- A step past the bound is an error at once, not a wait.
SELECT snowflake_inject_clock_offset(-5000);
\set VERBOSITY sqlstate
SELECT snowflake_nextval();
\set VERBOSITY default
SELECT snowflake_inject_clock_offset(0);
SELECT snowflake_nextval() > :after AS resumes_above;

-- The statistics counted the wait of at least 300 ms above.
SELECT waits >= 1 AS waited, wait_time_ms >= 250 AS wait_time_counted FROM snowflake_stats();
