-- The durable reservation: its report for monitoring, adopting a new epoch or layout, and a slow disk for
-- tests.

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

CREATE FUNCTION snowflake_adopt_layout() RETURNS timestamptz
AS 'MODULE_PATHNAME', 'snowflake_adopt_layout'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION snowflake_adopt_layout() FROM PUBLIC;

COMMENT ON FUNCTION snowflake_adopt_layout() IS
'On a server that refuses IDs because snowflake.epoch or snowflake.layout changed, puts the new ones on record with a reservation above every ID issued under the old ones, so that after a restart every new ID is larger; returns the time new IDs start above. Refuses an epoch that would make new IDs smaller. For superusers.';

-- The epoch and layout this database's IDs are issued with, kept in the catalog, which pg_upgrade carries
-- into a new data directory where snowflake.state and the WAL stay behind (docs/guarantees.md). Its body
-- is the record: snowflake_record_layout() and snowflake_adopt_layout() rewrite it.
CREATE FUNCTION snowflake_layout_on_record(OUT epoch_ms bigint, OUT layout text)
AS $record$SELECT NULL::pg_catalog.int8, NULL::pg_catalog.text$record$
LANGUAGE sql IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_layout_on_record() IS
'The snowflake.epoch (Unix ms) and layout this database''s IDs were issued with, on record in the catalog; NULL when the extension was created without preloading. The first ID after a start that found no snowflake.state checks it.';

CREATE FUNCTION snowflake_record_layout() RETURNS void
AS 'MODULE_PATHNAME', 'snowflake_record_layout'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION snowflake_record_layout() FROM PUBLIC;

COMMENT ON FUNCTION snowflake_record_layout() IS
'Puts the snowflake.epoch and layout this server''s IDs are on record with into snowflake_layout_on_record() in this database; run by the install and upgrade scripts. For superusers.';

SELECT snowflake_record_layout();
