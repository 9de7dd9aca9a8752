-- snowflake installed but not in shared_preload_libraries, with
-- snowflake.epoch = 1577836800000 (2020-01-01 00:00:00 UTC) in postgresql.conf.
CREATE EXTENSION snowflake;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';

-- Generation refuses with 55000 and says how to preload.
SELECT snowflake_nextval();
\echo :SQLSTATE

-- Settings from postgresql.conf still apply, and decoding still works with that epoch.
SHOW snowflake.node;
SHOW snowflake.epoch;
SELECT snowflake_timestamp(0);
SELECT * FROM snowflake_parse(910499571847892992);

-- Without preloading, snowflake.epoch is a placeholder a session could SET before
-- the library loads; decoding ignores that and keeps the configured epoch.
\c
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';
SET snowflake.epoch = '0';
SELECT snowflake_timestamp(0);
