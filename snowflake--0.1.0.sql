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

-- Querying by time: time bounds as ID bounds, and a filter the planner turns into an ID range.

CREATE FUNCTION snowflake_min_id(ts timestamptz) RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_min_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_min_id(timestamptz) IS
'Returns the smallest snowflake ID whose time is at or after ts (node 0, sequence 0 of that millisecond).';

CREATE FUNCTION snowflake_max_id(ts timestamptz) RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_max_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_max_id(timestamptz) IS
'Returns the largest snowflake ID whose time is at or before ts (node 1023, sequence 4095 of that millisecond).';

CREATE FUNCTION snowflake_id_range(r tstzrange) RETURNS int8range
AS 'MODULE_PATHNAME', 'snowflake_id_range'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_id_range(tstzrange) IS
'Returns exactly the snowflake IDs whose time lies in r, as an int8range; unbounded where r is.';

CREATE FUNCTION snowflake_range_first_id(r tstzrange) RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_range_first_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_range_first_id(tstzrange) IS
'Returns the smallest snowflake ID whose time lies in r (0 when r is unbounded below); used by the planner for snowflake_between().';

CREATE FUNCTION snowflake_range_last_id(r tstzrange) RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_range_last_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_range_last_id(tstzrange) IS
'Returns the largest snowflake ID whose time lies in r (below the first when none does); used by the planner for snowflake_between().';

CREATE FUNCTION snowflake_between_support(internal) RETURNS internal
AS 'MODULE_PATHNAME', 'snowflake_between_support'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_between_support(internal) IS
'Planner support for snowflake_between(): rewrites it as id >= first AND id <= last, so B-tree and BRIN indexes and partition pruning apply.';

CREATE FUNCTION snowflake_between(id bigint, r tstzrange) RETURNS boolean
AS 'MODULE_PATHNAME', 'snowflake_between'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
SUPPORT snowflake_between_support;

COMMENT ON FUNCTION snowflake_between(bigint, tstzrange) IS
'Returns whether the time of snowflake ID id lies in r. Uses the index on id: the planner rewrites it as an ID range.';

CREATE OPERATOR <@ (LEFTARG = bigint, RIGHTARG = tstzrange, FUNCTION = snowflake_between);

COMMENT ON OPERATOR <@ (bigint, tstzrange) IS
'Is the time of the snowflake ID on the left in the range on the right? Same as snowflake_between().';

CREATE FUNCTION snowflake_backfill_id(ts timestamptz, seq integer DEFAULT 0) RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_backfill_id'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_backfill_id(timestamptz, integer) IS
'Returns the ID for a past time ts on the node reserved by snowflake.backfill_node, with sequence seq (0 to 4095). No server issues IDs on that node, so backfilled IDs never repeat generated ones.';

-- Many servers: which node's IDs reached this server through which replication origin.

CREATE FUNCTION snowflake_node_origins(tbl regclass, id_column name DEFAULT 'id')
RETURNS TABLE (node integer, origin text, ids bigint, first_id_time timestamptz, last_id_time timestamptz,
               shared_node boolean)
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE AS $fn$
BEGIN
  IF NOT current_setting('track_commit_timestamp')::boolean THEN
    RAISE EXCEPTION 'snowflake_node_origins() needs track_commit_timestamp = on'
      USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'Set track_commit_timestamp = on in postgresql.conf and restart; rows written before that have no recorded origin.';
  END IF;
  -- Each row's transaction records the replication origin that applied it (0: written here).
  -- An ID's node is bits 12 to 21.
  RETURN QUERY EXECUTE format($q$
    WITH found AS (
      SELECT ((%1$I >> 12) & 1023)::integer AS node, %1$I AS id, (pg_xact_commit_timestamp_origin(xmin)).roident AS roident
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
    FROM per_origin p ORDER BY p.node, p.origin$q$, id_column, tbl);
END
$fn$;

COMMENT ON FUNCTION snowflake_node_origins(regclass, name) IS
'On a server that receives rows from others (a logical-replication aggregator), lists each node found in a table''s IDs with the origin that brought it; shared_node flags a node arriving from more than one origin, i.e. two servers with the same snowflake.node. Needs track_commit_timestamp = on.';
