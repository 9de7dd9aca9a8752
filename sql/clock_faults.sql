-- Clock faults, injected with snowflake_inject_clock_offset() on a server with
-- snowflake.fault_injection = on, under the default policy (borrow, max_clock_drift 1 s).
-- Whatever the clock does, IDs never repeat and never decrease; a step past
-- the bound is an error naming the drift.
CREATE EXTENSION snowflake;
CREATE FUNCTION pg_temp.outcome(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, '\d+ ms', 'N ms', 'g');
END $$;
CREATE TABLE ids (n bigserial, step text, id bigint);

-- On a fresh server, a clock 20 years back reads before the epoch (2010-11-04).
SELECT snowflake_inject_clock_offset(-20 * 365 * 86400000::bigint);
SELECT pg_temp.outcome('SELECT snowflake_nextval()');
SELECT state FROM snowflake_state();
-- A clock 70 years ahead is past the end of the 41-bit field (2080-07-10).
SELECT snowflake_inject_clock_offset(70 * 365 * 86400000::bigint);
SELECT pg_temp.outcome('SELECT snowflake_nextval()');
SELECT state FROM snowflake_state();

SELECT snowflake_inject_clock_offset(0);
INSERT INTO ids (step, id) SELECT 'true clock', snowflake_nextval() FROM generate_series(1, 1000);
-- Steps back of 10 ms and 900 ms are within the bound: IDs carry on from the last one.
SELECT snowflake_inject_clock_offset(-10);
INSERT INTO ids (step, id) SELECT 'back 10 ms', snowflake_nextval() FROM generate_series(1, 1000);
SELECT snowflake_inject_clock_offset(-900);
INSERT INTO ids (step, id) SELECT 'back 900 ms', snowflake_nextval() FROM generate_series(1, 1000);
-- A step back of 10 s is past it: an error, and nothing is issued.
SELECT snowflake_inject_clock_offset(-10000);
SELECT pg_temp.outcome('SELECT snowflake_nextval()');
SELECT snowflake_inject_clock_offset(0);
INSERT INTO ids (step, id) SELECT 'true clock again', snowflake_nextval() FROM generate_series(1, 1000);

-- A clock that ran 5 s fast and is then corrected leaves the last ID 5 s
-- ahead: an error until the clock is within the bound of it again.
SELECT snowflake_inject_clock_offset(5000);
INSERT INTO ids (step, id) SELECT '5 s fast', snowflake_nextval() FROM generate_series(1, 1000);
SELECT snowflake_inject_clock_offset(0);
SELECT pg_temp.outcome('SELECT snowflake_nextval()');
SELECT snowflake_inject_clock_offset(4500);
INSERT INTO ids (step, id) SELECT '4.5 s fast', snowflake_nextval() FROM generate_series(1, 1000);

SELECT step, count(*) AS ids FROM ids GROUP BY step ORDER BY min(n);
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids FROM ids;
SELECT bool_and(id > previous) AS strictly_increasing
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS previous FROM ids) AS s WHERE previous IS NOT NULL;
SELECT bool_and(p.node = 3) AS all_node_3 FROM ids, LATERAL snowflake_parse(id) AS p;

-- Bad offsets, and callers other than superusers, are refused.
SELECT snowflake_inject_clock_offset(9223372036854775807);
\echo :SQLSTATE
SELECT snowflake_inject_clock_offset(NULL) IS NULL AS null_is_a_no_op;
CREATE ROLE snowflake_tester;
SET ROLE snowflake_tester;
SELECT snowflake_inject_clock_offset(0);
\echo :SQLSTATE
RESET ROLE;
GRANT EXECUTE ON FUNCTION snowflake_inject_clock_offset(bigint) TO snowflake_tester;
SET ROLE snowflake_tester;
SELECT snowflake_inject_clock_offset(0);
\echo :SQLSTATE
RESET ROLE;
REVOKE EXECUTE ON FUNCTION snowflake_inject_clock_offset(bigint) FROM snowflake_tester;
-- A slow disk, injected the same way: a delay from 0 to 60 s, by a superuser only.
SELECT snowflake_inject_write_delay(-1);
\echo :SQLSTATE
SELECT snowflake_inject_write_delay(60001);
\echo :SQLSTATE
SELECT snowflake_inject_write_delay(NULL) IS NULL AS null_is_a_no_op;
GRANT EXECUTE ON FUNCTION snowflake_inject_write_delay(integer) TO snowflake_tester;
SET ROLE snowflake_tester;
SELECT snowflake_inject_write_delay(10);
\echo :SQLSTATE
RESET ROLE;
REVOKE EXECUTE ON FUNCTION snowflake_inject_write_delay(integer) FROM snowflake_tester;
DROP ROLE snowflake_tester;
SELECT snowflake_inject_write_delay(20);
SELECT count(snowflake_nextval()) AS issued_with_slow_writes FROM generate_series(1, 1000);
SELECT snowflake_inject_write_delay(0);
SELECT snowflake_inject_clock_offset(0);
DROP TABLE ids;

-- The statistics saw the steps back, the largest drift (the 10 s step) and the borrowed time.
SELECT clock_regressions >= 4 AS regressions_counted, max_clock_drift_ms BETWEEN 9000 AND 10000 AS largest_drift_seen,
       clock_offset_ms
FROM snowflake_stats();
-- Back on the true clock, the last ID (4.5 s fast) is past the 1 s bound: the state names it, from the
-- step a call would take, with when it ends by itself; and a call fails with it.
SELECT s.state, s.state = st.state AS same_in_both, st.since <= clock_timestamp() AS since_known,
       st.detail LIKE 'the clock is % ms behind the last ID issued; snowflake.max_clock_drift allows 1000 ms'
         AS detail_names_the_lag,
       st.resumes_at BETWEEN clock_timestamp() AND clock_timestamp() + interval '4.5 s' AS resumes_by_itself
FROM snowflake_stats() s, snowflake_state() st;
SELECT pg_temp.outcome('SELECT snowflake_nextval()');
SELECT snowflake_inject_clock_offset(4500);
SELECT state, detail IS NULL AS no_detail, resumes_at IS NULL AS nothing_to_resume FROM snowflake_state();
