-- A custom snowflake.epoch on a server that does not preload snowflake. Without
-- preloading, a reload could change the epoch for later backends, which would
-- break expression indexes on the IMMUTABLE decode functions; so decoding
-- refuses, saying how to fix it, instead of decoding with a wrong epoch.
CREATE EXTENSION snowflake;
SELECT snowflake_timestamp(910499571847892992);
\echo :SQLSTATE
SELECT * FROM snowflake_parse(910499571847892992);
\echo :SQLSTATE
SELECT snowflake_nextval();
\echo :SQLSTATE
-- The argument checks still come first, and NULL is still NULL.
SELECT snowflake_timestamp(-1);
\echo :SQLSTATE
SELECT snowflake_timestamp(NULL) IS NULL AS null_is_null;
