-- snowflake 0.1.0: the SQL objects of the extension.
\echo Use "CREATE EXTENSION snowflake" to load this file. \quit

CREATE FUNCTION snowflake_nextval() RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_nextval'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_nextval() IS
'Returns a new snowflake ID: unique on this server and greater than every ID it issued before. Needs shared_preload_libraries and snowflake.node.';

CREATE FUNCTION snowflake_timestamp(id bigint) RETURNS timestamptz
AS 'MODULE_PATHNAME', 'snowflake_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_timestamp(bigint) IS
'Returns the time embedded in a snowflake ID, to the millisecond, counted from snowflake.epoch.';

CREATE FUNCTION snowflake_parse(id bigint, OUT ts timestamptz, OUT node integer, OUT seq integer)
AS 'MODULE_PATHNAME', 'snowflake_parse'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_parse(bigint) IS
'Splits a snowflake ID into its time (ts), node and sequence number (seq).';

CREATE FUNCTION snowflake_inject_clock_offset(offset_ms bigint) RETURNS void
AS 'MODULE_PATHNAME', 'snowflake_inject_clock_offset'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION snowflake_inject_clock_offset(bigint) FROM PUBLIC;

COMMENT ON FUNCTION snowflake_inject_clock_offset(bigint) IS
'For tests only: moves the ID generator''s clock by offset_ms for every backend. Needs snowflake.fault_injection = on and a superuser.';

CREATE FUNCTION snowflake_stats(
    OUT node integer, OUT epoch timestamptz, OUT layout text,
    OUT last_id bigint, OUT last_id_time timestamptz, OUT reserved_until timestamptz,
    OUT ids_issued bigint, OUT exhaustions bigint, OUT clock_regressions bigint, OUT max_clock_drift_ms bigint,
    OUT waits bigint, OUT wait_time_ms bigint, OUT reservations bigint,
    OUT ids_per_second bigint, OUT runs_out_at timestamptz, OUT state text, OUT clock_offset_ms bigint)
AS 'MODULE_PATHNAME', 'snowflake_stats'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION snowflake_stats() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake_stats() TO pg_monitor;

COMMENT ON FUNCTION snowflake_stats() IS
'Reports this server''s ID generator: node, layout, last ID, durable reservation, counters since start, capacity and end of time. For pg_monitor.';
