-- Upgrade snowflake 0.3.0 to 0.4.0: only what changed since 0.3.0. The build
-- writes snowflake--0.3.0--0.4.0.sql from this file, replacing each
-- "-- @include FILE" line with that source file, its CREATE FUNCTION as
-- CREATE OR REPLACE FUNCTION (so include only files of functions and their
-- comments and grants). A fresh CREATE EXTENSION runs the full install script
-- instead; the upgrade suite checks that both reach the same catalog. At
-- release the built script is committed as it is and this file is removed.

\echo Use "ALTER EXTENSION snowflake UPDATE TO '0.4.0'" to load this file. \quit

-- snowflake_state(): whether IDs can be issued now, and if not why, since when and until when.
CREATE FUNCTION snowflake_state(
    OUT state text, OUT since timestamptz, OUT detail text, OUT resumes_at timestamptz)
AS 'MODULE_PATHNAME', 'snowflake_state'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION snowflake_state() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake_state() TO pg_monitor;

COMMENT ON FUNCTION snowflake_state() IS
'Reports whether snowflake_nextval() can issue an ID now (state ok), or the condition that makes it fail, since when, in words, and when it ends by itself if it does. For pg_monitor.';
