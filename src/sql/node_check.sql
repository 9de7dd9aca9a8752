-- The node check (src/claims.hpp): every server's claim on its node, and the function its background
-- worker, "snowflake node check", runs every snowflake.node_check_interval. Logical replication
-- carries the claims like any table; on Citus every server asks the others for theirs.

CREATE TABLE snowflake_node_claims (
    system_identifier text NOT NULL,
    timeline integer NOT NULL,
    node integer NOT NULL,
    server text NOT NULL,
    started_at timestamptz NOT NULL,
    heartbeat timestamptz NOT NULL,
    PRIMARY KEY (system_identifier, timeline)
);

REVOKE ALL ON snowflake_node_claims FROM PUBLIC;
GRANT SELECT ON snowflake_node_claims TO pg_monitor;

COMMENT ON TABLE snowflake_node_claims IS
'One row a server: the node it issues IDs under, since when, and a heartbeat its node check renews; a server is its cluster''s system identifier and WAL timeline. Replicate it with the tables of a logical-replication set-up, so that every server sees the others'' claims. For pg_monitor to read.';

-- Renews this server's claim and returns the live claims on its node by other servers: those in its
-- own table (a heartbeat within stale_s), and on Citus every server's. Claims of this server's own
-- past are not another server's: an earlier timeline of its cluster (before a promotion), or its
-- name with a heartbeat from before it started (pg_upgrade, a restored data directory). A Citus
-- server that could not be asked is a row of its own, with NULL claimed_at and identity, and the
-- error in claimant.
CREATE FUNCTION snowflake_claim_node(node integer, server text, system_identifier text, timeline integer,
                                     stale_s integer, started timestamptz)
RETURNS TABLE (claimant text, claimed_at timestamptz, identity text)
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  ext_schema name;
  probe text;
  me record;
  prior record;
  citus_cluster boolean := false;
BEGIN
  SELECT n.nspname INTO ext_schema
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake';
  -- The claim is written whole at every renewal, deleted and inserted again, never updated: logical
  -- replication skips an UPDATE of a row the subscriber lacks (a subscription made after the claim
  -- was first written, with copy_data = false), so a peer gets the row at the next renewal. Since
  -- when this server issues under the node is kept while the node stays the same.
  EXECUTE format($q$
    DELETE FROM %I.snowflake_node_claims c WHERE c.system_identifier = $1 AND c.timeline = $2
    RETURNING c.node, c.started_at$q$, ext_schema) INTO prior USING system_identifier, timeline;
  EXECUTE format($q$
    INSERT INTO %I.snowflake_node_claims (system_identifier, timeline, node, server, started_at, heartbeat)
    VALUES ($1, $2, $3, $4, CASE WHEN $5 = $3 THEN $6 ELSE now() END, now())$q$,
    ext_schema) USING system_identifier, timeline, node, server, prior.node, prior.started_at;
  SELECT snowflake_claim_node.system_identifier AS sid, snowflake_claim_node.timeline AS tli,
         snowflake_claim_node.server AS name, snowflake_claim_node.started AS since INTO me;
  RETURN QUERY EXECUTE format($q$
    SELECT c.server, c.started_at, c.system_identifier || ':' || c.timeline
    FROM %I.snowflake_node_claims c
    WHERE c.node = $1 AND c.heartbeat > now() - make_interval(secs => $2)
      AND NOT (c.system_identifier = $3 AND c.timeline <= $4)
      AND NOT (c.server = $5 AND c.heartbeat < $6)$q$, ext_schema)
    USING node, stale_s, me.sid, me.tli, me.name, me.since;
  IF to_regclass('pg_catalog.pg_dist_node') IS NOT NULL THEN
    EXECUTE 'SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_node)' INTO citus_cluster;
  END IF;
  IF citus_cluster THEN
    -- Every name is qualified: the probe runs on fresh connections with the role's search_path. Qualified
    -- operators all bind alike, left to right: the parentheses make it heartbeat > (now() - interval).
    probe := format($p$SELECT pg_catalog.json_agg(pg_catalog.json_build_array(c.server, c.started_at,
        c.system_identifier, c.timeline, c.node,
        c.heartbeat OPERATOR(pg_catalog.>) (pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.make_interval(secs => %s)),
        c.heartbeat))::pg_catalog.text FROM %I.snowflake_node_claims c$p$, stale_s, ext_schema);
    RETURN QUERY EXECUTE $q$
      WITH r AS MATERIALIZED (SELECT * FROM run_command_on_all_nodes($1))
      SELECT e->>0, (e->>1)::timestamptz, (e->>2) || ':' || (e->>3)
      FROM r, json_array_elements(CASE WHEN r.success AND r.result <> '' THEN r.result::json ELSE '[]' END) e
      WHERE (e->>4)::integer = $2 AND (e->>5)::boolean
        AND NOT ((e->>2) = $3 AND (e->>3)::integer <= $4)
        AND NOT ((e->>0) = $5 AND (e->>6)::timestamptz < $6)
      UNION ALL
      SELECT coalesce(d.nodename || ':' || d.nodeport, 'node ' || r.nodeid) || ': ' || r.result, NULL, NULL
      FROM r LEFT JOIN pg_dist_node d ON d.nodeid = r.nodeid
      WHERE NOT r.success$q$
      USING probe, node, me.sid, me.tli, me.name, me.since;
  END IF;
END
$fn$;

REVOKE ALL ON FUNCTION snowflake_claim_node(integer, text, text, integer, integer, timestamptz) FROM PUBLIC;

COMMENT ON FUNCTION snowflake_claim_node(integer, text, text, integer, integer, timestamptz) IS
'For the node check worker: renews this server''s claim on its node and returns the live claims on it by other servers. Not for direct use; EXECUTE is revoked from PUBLIC.';
