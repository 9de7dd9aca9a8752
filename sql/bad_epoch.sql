-- A malformed snowflake.epoch in postgresql.conf, on a server that does not
-- preload snowflake (a preloaded one would refuse to start): loading the
-- library fails, rather than decoding IDs with a wrong epoch.
CREATE EXTENSION snowflake;
\echo :SQLSTATE
SELECT count(*) AS installed FROM pg_extension WHERE extname = 'snowflake';
