-- Upgrade snowflake 0.1.0 to 0.2.0. CREATE EXTENSION snowflake (0.2.0) runs
-- snowflake--0.1.0.sql and then this script, so it is also the install path
-- for everything new in 0.2.0. Released scripts are never edited.

\echo Use "ALTER EXTENSION snowflake UPDATE TO '0.2.0'" to load this file. \quit

-- == Layouts and block reservation ==========================================

-- Decoding IDs of another layout or epoch (foreign IDs): the layout is an argument, so these
-- depend on their arguments alone.

CREATE FUNCTION snowflake_timestamp(id bigint, layout text) RETURNS timestamptz
AS 'MODULE_PATHNAME', 'snowflake_timestamp_layout'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_timestamp(bigint, text) IS
'Returns the time embedded in a snowflake ID of the given layout, such as ''sonyflake'' or ''time=39,unit=10ms,node=16,seq=8,epoch=1409529600000''.';

CREATE FUNCTION snowflake_parse(id bigint, layout text, OUT ts timestamptz, OUT node integer, OUT seq integer)
AS 'MODULE_PATHNAME', 'snowflake_parse_layout'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_parse(bigint, text) IS
'Splits a snowflake ID of the given layout into its time (ts), node and sequence number (seq).';

CREATE FUNCTION snowflake_layout(layout text,
    OUT name text, OUT spec text, OUT time_bits integer, OUT unit interval, OUT node_bits integer,
    OUT seq_bits integer, OUT epoch timestamptz, OUT nodes bigint, OUT ids_per_second bigint,
    OUT runs_out_at timestamptz)
AS 'MODULE_PATHNAME', 'snowflake_layout'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_layout(text) IS
'Describes a layout spec: its widths, tick, epoch, node count, IDs per second per node, and when its time field runs out.';

-- Blocks of IDs for application-side caches (Hibernate pooled optimizers, batch loaders).

CREATE FUNCTION snowflake_nextval_block(n integer) RETURNS int8range
AS 'MODULE_PATHNAME', 'snowflake_nextval_block'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_nextval_block(integer) IS
'Returns n new consecutive snowflake IDs [first, first + n) of one tick (n from 1 to 2^seq bits: 4096 on twitter), above every ID this server issued before and below every later one.';

-- snowflake_stats() gains the layout's name, its spec with the epoch, and its last node.
-- The C function fills only the columns a declaration asks for, so the 0.1.0 one works too.

DROP FUNCTION snowflake_stats();

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

-- Comments of 0.1.0 that named twitter's limits.

COMMENT ON FUNCTION snowflake_timestamp(bigint) IS
'Returns the time embedded in a snowflake ID, to the millisecond (the layout''s tick), in snowflake.layout and counted from snowflake.epoch.';
COMMENT ON FUNCTION snowflake_max_id(timestamptz) IS
'Returns the largest snowflake ID whose time is at or before ts (the last node and sequence of that tick: 1023 and 4095 on twitter).';
COMMENT ON FUNCTION snowflake_backfill_id(timestamptz, integer) IS
'Returns the ID for a past time ts on the node reserved by snowflake.backfill_node, with sequence seq (0 to 2^seq bits - 1: 4095 on twitter). No server issues IDs on that node, so backfilled IDs never repeat generated ones.';

-- snowflake_node_origins() read the node at twitter's bit positions; it now reads the active layout's.

CREATE OR REPLACE FUNCTION snowflake_node_origins(tbl regclass, id_column name DEFAULT 'id')
RETURNS TABLE (node integer, origin text, ids bigint, first_id_time timestamptz, last_id_time timestamptz,
               shared_node boolean)
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE AS $fn$
DECLARE
  active record;
BEGIN
  IF NOT current_setting('track_commit_timestamp')::boolean THEN
    RAISE EXCEPTION 'snowflake_node_origins() needs track_commit_timestamp = on'
      USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'Set track_commit_timestamp = on in postgresql.conf and restart; rows written before that have no recorded origin.';
  END IF;
  SELECT * INTO active FROM snowflake_layout(coalesce(nullif(current_setting('snowflake.layout', true), ''), 'twitter'));
  -- Each row's transaction records the replication origin that applied it (0: written here).
  -- An ID's node is the node_bits above its seq_bits.
  RETURN QUERY EXECUTE format($q$
    WITH found AS (
      SELECT ((%1$I >> %3$s) & %4$s)::integer AS node, %1$I AS id, (pg_xact_commit_timestamp_origin(xmin)).roident AS roident
      FROM %2$s),
    per_origin AS (
      SELECT f.node,
             CASE WHEN f.roident IS NULL THEN 'unknown (frozen or before track_commit_timestamp)'
                  WHEN f.roident = 0 THEN 'local'
                  ELSE coalesce('subscription ' || s.subname, 'origin ' || o.roname) END AS origin,
             count(*) AS ids, snowflake_timestamp(min(f.id)) AS first_id_time, snowflake_timestamp(max(f.id)) AS last_id_time
      FROM found f
      LEFT JOIN pg_replication_origin o ON o.roident = f.roident
      LEFT JOIN pg_subscription s ON o.roname = 'pg_' || s.oid
      GROUP BY 1, 2)
    SELECT p.node, p.origin, p.ids, p.first_id_time, p.last_id_time, count(*) OVER (PARTITION BY p.node) > 1
    FROM per_origin p ORDER BY p.node, p.origin$q$, id_column, tbl, active.seq_bits, active.nodes - 1);
END
$fn$;


-- == Adoption: table conversion, text encodings, the snowflake type =========



-- == end ====================================================================
