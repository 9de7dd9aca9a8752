-- Issuing IDs: the generator's entry points, its monitoring view and its test hook.

-- PARALLEL RESTRICTED: it runs in the leader of a parallel plan, never in a worker, so that
-- snowflake_lastval() (the leader's own) is the last ID of the statement. Blocks stay PARALLEL SAFE.
CREATE FUNCTION snowflake_nextval() RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_nextval'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION snowflake_nextval() IS
'Returns a new snowflake ID: unique on this server and greater than every ID it issued before. Needs shared_preload_libraries and snowflake.node.';

CREATE FUNCTION snowflake_lastval() RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_lastval'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION snowflake_lastval() IS
'Returns the ID snowflake_nextval() last returned in this session (a column default included), like lastval() for sequences; an error before the first.';

CREATE FUNCTION snowflake_nextval_block(n integer) RETURNS int8range
AS 'MODULE_PATHNAME', 'snowflake_nextval_block'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_nextval_block(integer) IS
'Returns n new consecutive snowflake IDs [first, first + n) of one tick (n from 1 to 2^seq bits: 4096 on twitter), above every ID this server issued before and below every later one.';

CREATE FUNCTION snowflake_stats(
    OUT node integer, OUT epoch timestamptz, OUT layout text,
    OUT last_id bigint, OUT last_id_time timestamptz, OUT reserved_until timestamptz,
    OUT ids_issued bigint, OUT exhaustions bigint, OUT clock_regressions bigint, OUT max_clock_drift_ms bigint,
    OUT waits bigint, OUT wait_time_ms bigint, OUT reservations bigint,
    OUT ids_per_second bigint, OUT runs_out_at timestamptz, OUT state text, OUT clock_offset_ms bigint,
    OUT layout_name text, OUT layout_spec text, OUT max_node integer)
AS 'MODULE_PATHNAME', 'snowflake_stats'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION snowflake_stats() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake_stats() TO pg_monitor;

COMMENT ON FUNCTION snowflake_stats() IS
'Reports this server''s ID generator: node, layout, last ID, durable reservation, counters since start, capacity and end of time. For pg_monitor.';

CREATE FUNCTION snowflake_state(
    OUT state text, OUT since timestamptz, OUT detail text, OUT resumes_at timestamptz)
AS 'MODULE_PATHNAME', 'snowflake_state'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION snowflake_state() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake_state() TO pg_monitor;

COMMENT ON FUNCTION snowflake_state() IS
'Reports whether snowflake_nextval() can issue an ID now (state ok), or the condition that makes it fail, since when, in words, and when it ends by itself if it does. For pg_monitor.';

CREATE FUNCTION snowflake_inject_clock_offset(offset_ms bigint) RETURNS void
AS 'MODULE_PATHNAME', 'snowflake_inject_clock_offset'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION snowflake_inject_clock_offset(bigint) FROM PUBLIC;

COMMENT ON FUNCTION snowflake_inject_clock_offset(bigint) IS
'For tests only: moves the ID generator''s clock by offset_ms for every backend. Needs snowflake.fault_injection = on and a superuser.';
