-- The durable reservation: its report for monitoring, and a slow disk for tests.

CREATE FUNCTION snowflake_reservation(
    OUT reserved_until timestamptz, OUT lead_ms bigint, OUT write_latency_ms double precision,
    OUT renewals bigint, OUT caller_writes bigint, OUT caller_waits bigint)
AS 'MODULE_PATHNAME', 'snowflake_reservation'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION snowflake_reservation() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake_reservation() TO pg_monitor;

COMMENT ON FUNCTION snowflake_reservation() IS
'Reports this server''s durable reservation: how far it reaches, its lead past the clock, the write latency that sizes it, and the writes made ahead of need (renewals) or by callers since start. For pg_monitor.';

CREATE FUNCTION snowflake_inject_write_delay(delay_ms integer) RETURNS void
AS 'MODULE_PATHNAME', 'snowflake_inject_write_delay'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION snowflake_inject_write_delay(integer) FROM PUBLIC;

COMMENT ON FUNCTION snowflake_inject_write_delay(integer) IS
'For tests only: makes every reservation write take delay_ms longer, as a slow disk would. Needs snowflake.fault_injection = on and a superuser.';
