-- Settings: nobody may change them with SET (a per-session node could repeat
-- IDs); ALTER SYSTEM rejects bad values, naming the valid range.
SHOW snowflake.node;
SHOW snowflake.epoch;
SHOW snowflake.max_clock_drift;
SHOW snowflake.clock_policy;

SET snowflake.node = 3;
\echo :SQLSTATE
BEGIN;
SET LOCAL snowflake.node = 3;
\echo :SQLSTATE
ROLLBACK;
SELECT set_config('snowflake.node', '3', false);
\echo :SQLSTATE
SET snowflake.epoch = '1288834974657';
\echo :SQLSTATE
SET snowflake.max_clock_drift = '5s';
\echo :SQLSTATE
SET snowflake.clock_policy = 'wait';
\echo :SQLSTATE
SHOW snowflake.node;

-- Out of range or malformed: refused, and nothing is written to postgresql.auto.conf.
ALTER SYSTEM SET snowflake.node = 1024;
\echo :SQLSTATE
ALTER SYSTEM SET snowflake.node = -2;
\echo :SQLSTATE
ALTER SYSTEM SET snowflake.node = 'seven';
\echo :SQLSTATE
ALTER SYSTEM SET snowflake.epoch = '2010-11-04';
\echo :SQLSTATE
ALTER SYSTEM SET snowflake.epoch = '-1';
\echo :SQLSTATE
ALTER SYSTEM SET snowflake.epoch = '99999999999999';
\echo :SQLSTATE
ALTER SYSTEM SET snowflake.max_clock_drift = -1;
\echo :SQLSTATE
ALTER SYSTEM SET snowflake.max_clock_drift = '2h';
\echo :SQLSTATE
ALTER SYSTEM SET snowflake.clock_policy = 'sometimes';
\echo :SQLSTATE
SELECT count(*) AS auto_conf_lines FROM pg_file_settings WHERE name LIKE 'snowflake.%' AND sourcefile LIKE '%auto.conf';

-- The prefix is reserved, so a misspelt setting is an error, not a silent placeholder.
SET snowflake.nodes = 3;
\echo :SQLSTATE
ALTER SYSTEM SET snowflake.nodes = 3;
\echo :SQLSTATE

-- Only a superuser may use ALTER SYSTEM at all.
CREATE ROLE snowflake_app;
SET ROLE snowflake_app;
ALTER SYSTEM SET snowflake.node = 3;
\echo :SQLSTATE
RESET ROLE;
DROP ROLE snowflake_app;

-- Fault injection is off by default, restart-only, and refused when off.
SHOW snowflake.fault_injection;
SET snowflake.fault_injection = on;
\echo :SQLSTATE
SELECT snowflake_inject_clock_offset(-1000);
\echo :SQLSTATE
SELECT snowflake_inject_write_delay(1000);
\echo :SQLSTATE
