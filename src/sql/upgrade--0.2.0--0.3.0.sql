-- Upgrade snowflake 0.2.0 to 0.3.0: only what changed since 0.2.0. The build
-- writes snowflake--0.2.0--0.3.0.sql from this file, replacing each
-- "-- @include FILE" line with that source file, its CREATE FUNCTION as
-- CREATE OR REPLACE FUNCTION (so include only files of functions and their
-- comments and grants). A fresh CREATE EXTENSION runs the full install script
-- instead; the upgrade suite checks that both reach the same catalog. At
-- release the built script is committed as it is and this file is removed.

\echo Use "ALTER EXTENSION snowflake UPDATE TO '0.3.0'" to load this file. \quit

-- snowflake_convert_column() also takes over pgEdge snowflake's snowflake.nextval() defaults.
-- @include src/sql/convert.sql

-- snowflake_node_origins() no longer depends on the caller's search_path.
-- @include src/sql/many_servers.sql

-- The snowflake type gets an exact <@ (untyped range literals were ambiguous on it).
CREATE FUNCTION snowflake_between(id snowflake, r tstzrange) RETURNS boolean
AS 'MODULE_PATHNAME', 'snowflake_between'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
SUPPORT snowflake_between_support;

COMMENT ON FUNCTION snowflake_between(snowflake, tstzrange) IS
'Returns whether the time of snowflake ID id lies in r. Uses the index on id: the planner rewrites it as an ID range.';

CREATE OPERATOR <@ (LEFTARG = snowflake, RIGHTARG = tstzrange, FUNCTION = snowflake_between);

COMMENT ON OPERATOR <@ (snowflake, tstzrange) IS
'Is the time of the snowflake ID on the left in the range on the right? Same as snowflake_between().';

-- This session's last ID, for clients that ask for it after an INSERT (PHP PDO, ORMs).
CREATE FUNCTION snowflake_lastval() RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_lastval'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION snowflake_lastval() IS
'Returns the ID snowflake_nextval() last returned in this session (a column default included), like lastval() for sequences; an error before the first.';

-- The durable reservation: its lead, latency and writers (monitoring), and a slow-disk fault for tests.
-- @include src/sql/reservation.sql
