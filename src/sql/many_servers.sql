-- Many servers: which node's IDs reached this server through which replication origin, and
-- which node each server of a Citus cluster runs on.

CREATE FUNCTION snowflake_node_origins(tbl regclass, id_column name DEFAULT 'id')
RETURNS TABLE (node integer, origin text, ids bigint, first_id_time timestamptz, last_id_time timestamptz,
               shared_node boolean)
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  active record;
  ext_schema name;  -- wherever the extension lives, on the caller's search_path or not
  citus_table boolean := false;
BEGIN
  SELECT n.nspname INTO ext_schema
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake';
  EXECUTE format('SELECT * FROM %I.snowflake_layout($1)', ext_schema) INTO active
    USING coalesce(nullif(current_setting('snowflake.layout', true), ''), 'twitter');
  IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
    EXECUTE 'SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_partition WHERE logicalrelid = $1)' INTO citus_table USING tbl;
  END IF;
  -- Citus writes a table's rows on the workers by ordinary connections: every row is local to the
  -- shard that holds it, whichever server made its ID, so origins say nothing about shared nodes.
  IF citus_table THEN
    RAISE NOTICE 'snowflake_node_origins() cannot tell from the rows of the Citus table % whether two servers share a node', tbl
      USING DETAIL = 'Citus writes every row on a worker through an ordinary connection, so each row is local to its shard, whichever server made its ID; shared_node is NULL.',
            HINT = 'Run SELECT * FROM snowflake_cluster_nodes() on the coordinator: it asks every server for its snowflake.node.';
    RETURN QUERY EXECUTE format($q$
      SELECT ((%1$I >> %3$s) & %4$s)::integer, 'Citus table', count(*),
             %5$I.snowflake_timestamp(min(%1$I)), %5$I.snowflake_timestamp(max(%1$I)), NULL::boolean
      FROM %2$s GROUP BY 1 ORDER BY 1$q$, id_column, tbl, active.seq_bits, active.nodes - 1, ext_schema);
    RETURN;
  END IF;
  IF NOT current_setting('track_commit_timestamp')::boolean THEN
    RAISE EXCEPTION 'snowflake_node_origins() needs track_commit_timestamp = on'
      USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'Set track_commit_timestamp = on in postgresql.conf and restart; rows written before that have no recorded origin.';
  END IF;
  -- Each row's transaction records the replication origin that applied it (0: written here).
  -- An ID's node is the node_bits above its seq_bits. Rows whose origin is unknown or was dropped
  -- (a dropped subscription, a Citus shard move) cannot be told apart from local ones: they are
  -- labelled as such, and neither flag nor count toward a shared node.
  RETURN QUERY EXECUTE format($q$
    WITH found AS (
      SELECT ((%1$I >> %3$s) & %4$s)::integer AS node, %1$I AS id, (pg_xact_commit_timestamp_origin(xmin)).roident AS roident
      FROM %2$s),
    per_origin AS (
      SELECT f.node,
             CASE WHEN f.roident IS NULL THEN 'unknown (frozen or before track_commit_timestamp)'
                  WHEN f.roident = 0 THEN 'local'
                  WHEN o.roident IS NULL THEN 'dropped origin ' || f.roident
                  ELSE coalesce('subscription ' || s.subname, 'origin ' || o.roname) END AS origin,
             f.roident = 0 OR o.roident IS NOT NULL AS known,
             count(*) AS ids, %5$I.snowflake_timestamp(min(f.id)) AS first_id_time, %5$I.snowflake_timestamp(max(f.id)) AS last_id_time
      FROM found f
      LEFT JOIN pg_replication_origin o ON o.roident = f.roident
      LEFT JOIN pg_subscription s ON o.roname = 'pg_' || s.oid
      GROUP BY 1, 2, 3)
    SELECT p.node, p.origin, p.ids, p.first_id_time, p.last_id_time,
           CASE WHEN p.known THEN count(*) FILTER (WHERE p.known) OVER (PARTITION BY p.node) > 1 END
    FROM per_origin p ORDER BY p.node, p.origin$q$, id_column, tbl, active.seq_bits, active.nodes - 1, ext_schema);
END
$fn$;

COMMENT ON FUNCTION snowflake_node_origins(regclass, name) IS
'On a server that receives rows from others (a logical-replication aggregator), lists each node found in a table''s IDs with the origin that brought it; shared_node flags a node arriving from more than one known origin, i.e. two servers with the same snowflake.node (NULL for rows of a dropped or unknown origin, and on a Citus table). Needs track_commit_timestamp = on.';

-- Asks every server of a Citus cluster (this server alone without Citus) for its generator's node,
-- state, layout and epoch, and names what is wrong with each: the check to run after citus_add_node.
CREATE FUNCTION snowflake_cluster_nodes()
RETURNS TABLE (server text, role text, node integer, state text, layout text, epoch timestamptz, problem text,
               node_source text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  ext_schema name;
  probe text;     -- what each server runs: its snowflake_stats() as one JSON text
  origin text;    -- and its snowflake_node_status().node_source
  local_origin text;
  reports text;   -- a query giving (server, role, sort_host, sort_port, success, result, source) per server
  shared record;
  shared_nodes integer[] := '{}';  -- the servers flagged 'shared node', and their nodes
  shared_servers text[] := '{}';
BEGIN
  SELECT n.nspname INTO ext_schema
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake';
  -- Each server runs it on a new connection with the role's own search_path, where another role may have
  -- planted a better match for an unqualified name: every name in it is schema-qualified.
  -- Every column as JSON, so that a server whose snowflake_stats() has fewer (an older version) answers too.
  probe := format($p$SELECT pg_catalog.to_jsonb(s)::pg_catalog.text FROM %I.snowflake_stats() s$p$, ext_schema);
  -- Asked apart: where the function cannot run (a server running an older library, going back to
  -- 0.4.0, or a caller granted this function and snowflake_stats() only), node_source alone is NULL.
  origin := format($p$SELECT node_source FROM %I.snowflake_node_status()$p$, ext_schema);
  IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
    -- Citus runs the probe on every active primary in its metadata, and on this server when the
    -- metadata lacks it (a coordinator that was never registered); group 0 is the coordinator's.
    reports := format($q$
      SELECT coalesce(d.nodename, current_setting('citus.local_hostname')) || ':' || coalesce(d.nodeport, current_setting('port')::int),
             CASE WHEN coalesce(d.groupid, (SELECT groupid FROM pg_dist_local_group)) = 0 THEN 'coordinator' ELSE 'worker' END,
             coalesce(d.nodename, current_setting('citus.local_hostname')), coalesce(d.nodeport, current_setting('port')::int),
             r.success, r.result, CASE WHEN o.success THEN o.result END
      FROM run_command_on_all_nodes(%L) r LEFT JOIN pg_dist_node d ON d.nodeid = r.nodeid
      LEFT JOIN run_command_on_all_nodes(%L) o ON o.nodeid = r.nodeid$q$, probe, origin);
  ELSE
    -- This server alone, named as libpq would reach it: its address, or its first socket directory,
    -- read from pg_settings, which shows a role without pg_read_all_settings no row for it (a role
    -- granted this function alone: current_setting() refused it with 42501), hence [local].
    BEGIN
      EXECUTE origin INTO local_origin;
    EXCEPTION WHEN undefined_function OR insufficient_privilege THEN
      local_origin := NULL;
    END;
    reports := format($q$
      SELECT s.host || ':' || current_setting('port'), 'standalone', s.host, current_setting('port')::int, true, (%s), %L
      FROM (SELECT coalesce(host(inet_server_addr()),
                            (SELECT trim(split_part(setting, ',', 1)) FROM pg_settings WHERE name = 'unix_socket_directories'),
                            '[local]') AS host) s$q$,
      probe, local_origin);
  END IF;
  -- A server that answered reports its state; one that did not is unreachable (no connection) or
  -- failed (an ERROR there). Every server on a node that another has too is 'shared node', whatever
  -- its state (the node check's refusal, 'node conflict', included), so the WARNING below names them
  -- all. Layout and epoch are compared with the coordinator's (else this server's).
  FOR server, role, node, state, layout, epoch, problem, node_source IN EXECUTE format($q$
    WITH reports(server, role, sort_host, sort_port, success, result, source) AS (%s),
    parsed AS (
      SELECT r.*, (j.x->>'node')::integer AS node, r.source AS node_source, j.x->>'state' AS state,
             regexp_replace(j.x->>'layout_spec', ',epoch=-?[0-9]+$', '') AS layout, (j.x->>'epoch')::timestamptz AS epoch
      FROM reports r, LATERAL (SELECT CASE WHEN r.success THEN r.result::json END AS x) j),
    reference AS (
      SELECT p.layout, p.epoch FROM parsed p WHERE p.success
      ORDER BY p.role = 'coordinator' DESC, p.state = 'ok' DESC LIMIT 1)
    SELECT p.server, p.role, p.node, p.state, p.layout, p.epoch,
           CASE WHEN NOT p.success AND p.result NOT LIKE 'ERROR:  %%' THEN 'unreachable'
                WHEN NOT p.success AND p.result LIKE '%%shared_preload_libraries%%' THEN 'not preloaded'
                WHEN NOT p.success THEN 'error: ' || substr(p.result, 9)
                WHEN count(*) FILTER (WHERE p.success AND p.node IS NOT NULL) OVER (PARTITION BY p.node) > 1 THEN 'shared node'
                WHEN p.state <> 'ok' THEN p.state
                WHEN p.layout <> (SELECT layout FROM reference) THEN 'layout differs'
                WHEN p.epoch <> (SELECT epoch FROM reference) THEN 'epoch differs'
           END,
           p.node_source
    FROM parsed p
    ORDER BY p.role = 'coordinator' DESC, p.sort_host, p.sort_port$q$, reports) LOOP
    IF problem = 'shared node' THEN
      shared_nodes := shared_nodes || node;
      shared_servers := shared_servers || server;
    END IF;
    RETURN NEXT;
  END LOOP;
  -- Two servers on one node is the mistake that silently makes duplicate IDs: say so out loud too.
  FOR shared IN
    SELECT u.n AS node, string_agg(u.s, ', ' ORDER BY u.s) AS servers
    FROM unnest(shared_nodes, shared_servers) AS u(n, s) GROUP BY u.n ORDER BY u.n LOOP
    RAISE WARNING 'snowflake.node % is used by more than one server: %', shared.node, shared.servers
      USING DETAIL = 'Servers that share a node can issue the same IDs.',
            HINT = 'Give each server a node of its own (snowflake.node, or snowflake.node_source = ''citus''), then reload it.';
  END LOOP;
END
$fn$;

REVOKE ALL ON FUNCTION snowflake_cluster_nodes() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake_cluster_nodes() TO pg_monitor;

COMMENT ON FUNCTION snowflake_cluster_nodes() IS
'Lists every server of the Citus cluster (this server alone without Citus) with its node and where it came from, state, layout and epoch, and a problem: shared node, node unset (or another state that stops IDs), layout differs, epoch differs, not preloaded, unreachable, or error: and the error raised there. Warns when servers share a node. Run it after every citus_add_node. For pg_monitor.';
