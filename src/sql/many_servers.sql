-- Many servers: which node's IDs reached this server through which replication origin.

CREATE FUNCTION snowflake_node_origins(tbl regclass, id_column name DEFAULT 'id')
RETURNS TABLE (node integer, origin text, ids bigint, first_id_time timestamptz, last_id_time timestamptz,
               shared_node boolean)
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  active record;
  ext_schema name;  -- wherever the extension lives, on the caller's search_path or not
BEGIN
  IF NOT current_setting('track_commit_timestamp')::boolean THEN
    RAISE EXCEPTION 'snowflake_node_origins() needs track_commit_timestamp = on'
      USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'Set track_commit_timestamp = on in postgresql.conf and restart; rows written before that have no recorded origin.';
  END IF;
  SELECT n.nspname INTO ext_schema
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake';
  EXECUTE format('SELECT * FROM %I.snowflake_layout($1)', ext_schema) INTO active
    USING coalesce(nullif(current_setting('snowflake.layout', true), ''), 'twitter');
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
             count(*) AS ids, %5$I.snowflake_timestamp(min(f.id)) AS first_id_time, %5$I.snowflake_timestamp(max(f.id)) AS last_id_time
      FROM found f
      LEFT JOIN pg_replication_origin o ON o.roident = f.roident
      LEFT JOIN pg_subscription s ON o.roname = 'pg_' || s.oid
      GROUP BY 1, 2)
    SELECT p.node, p.origin, p.ids, p.first_id_time, p.last_id_time, count(*) OVER (PARTITION BY p.node) > 1
    FROM per_origin p ORDER BY p.node, p.origin$q$, id_column, tbl, active.seq_bits, active.nodes - 1, ext_schema);
END
$fn$;

COMMENT ON FUNCTION snowflake_node_origins(regclass, name) IS
'On a server that receives rows from others (a logical-replication aggregator), lists each node found in a table''s IDs with the origin that brought it; shared_node flags a node arriving from more than one origin, i.e. two servers with the same snowflake.node. Needs track_commit_timestamp = on.';
