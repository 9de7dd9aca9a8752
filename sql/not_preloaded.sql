-- snowflake installed but not in shared_preload_libraries (no epoch configured).
CREATE EXTENSION snowflake;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';

-- Generation refuses with 55000 and says how to preload.
SELECT snowflake_nextval();
\echo :SQLSTATE

-- Settings from postgresql.conf still apply, and decoding works with the default epoch.
SHOW snowflake.node;
SELECT snowflake_timestamp(910499571847892992);
SELECT * FROM snowflake_parse(910499571847892992);

-- Without preloading, snowflake.epoch is a placeholder a session could SET
-- before the library loads; decoding ignores it and keeps the default epoch.
\c
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';
SET snowflake.epoch = '0';
SELECT snowflake_timestamp(0);

-- Statistics need the shared generator too.
SELECT * FROM snowflake_stats();
\echo :SQLSTATE
SELECT * FROM snowflake_state();
\echo :SQLSTATE
