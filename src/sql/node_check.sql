-- The node check (src/claims.hpp): every server's claim on its node, the function its background
-- worker, "snowflake node check", runs every snowflake.node_check_interval, and the report of where
-- the node came from and what the check found. Logical replication carries the claims like any table;
-- on Citus every server asks the others for theirs.

-- A function of its own, not columns of snowflake_stats(): a library of 0.4.0 (going back to it)
-- builds snowflake_stats()'s row from the columns the catalog declares, with values for its own only.
CREATE FUNCTION snowflake_node_status(
    OUT node integer, OUT node_source text, OUT node_check text, OUT node_conflict text,
    OUT checked_at timestamptz)
AS 'MODULE_PATHNAME', 'snowflake_node_status'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION snowflake_node_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake_node_status() TO pg_monitor;

COMMENT ON FUNCTION snowflake_node_status() IS
'Reports this server''s node, where it came from, what the node check found (node_conflict names another server that claims the node) and when it last looked. For pg_monitor.';

CREATE SCHEMA snowflake_node_check;

GRANT USAGE ON SCHEMA snowflake_node_check TO pg_monitor;

COMMENT ON SCHEMA snowflake_node_check IS
'The node check''s table, apart from the schema the extension is installed in: the applications'' tools (schema dumps, ORMs'' schema diffs) see no table of the extension''s among theirs.';

CREATE TABLE snowflake_node_check.claims (
    system_identifier text NOT NULL,
    timeline integer NOT NULL,
    node integer NOT NULL,
    server text NOT NULL,
    started_at timestamptz NOT NULL,
    heartbeat timestamptz NOT NULL,
    PRIMARY KEY (system_identifier, timeline)
);

REVOKE ALL ON snowflake_node_check.claims FROM PUBLIC;
GRANT SELECT ON snowflake_node_check.claims TO pg_monitor;

COMMENT ON TABLE snowflake_node_check.claims IS
'One row a server: the node it issues IDs under, since when, and a heartbeat its node check renews; a server is its cluster''s system identifier and WAL timeline. Replicate it with the tables of a logical-replication set-up, so that every server sees the others'' claims. For pg_monitor to read.';

-- No role but the owner may write the claims (one that could would make a server refuse IDs), nor create
-- in their schema, whatever default privileges (ALTER DEFAULT PRIVILEGES) of the role installing the
-- extension granted on new tables and schemas: every privilege of another role is revoked but pg_monitor's
-- own, granted above. Every operator and function is pg_catalog's, named.
DO $acl$
DECLARE
  g record;
BEGIN
  FOR g IN
    SELECT 'SCHEMA snowflake_node_check' AS target, a.grantee, a.privilege_type, a.is_grantable,
           a.privilege_type OPERATOR(pg_catalog.=) 'USAGE' AS own
    FROM pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) a
    WHERE n.nspname OPERATOR(pg_catalog.=) 'snowflake_node_check' AND a.grantee OPERATOR(pg_catalog.<>) n.nspowner
    UNION ALL
    SELECT 'TABLE snowflake_node_check.claims', a.grantee, a.privilege_type, a.is_grantable,
           a.privilege_type OPERATOR(pg_catalog.=) 'SELECT'
    FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a
    WHERE c.oid OPERATOR(pg_catalog.=) 'snowflake_node_check.claims'::pg_catalog.regclass
      AND a.grantee OPERATOR(pg_catalog.<>) c.relowner
  LOOP
    IF g.own AND g.grantee OPERATOR(pg_catalog.=) 'pg_monitor'::pg_catalog.regrole AND NOT g.is_grantable THEN
      CONTINUE;
    END IF;
    EXECUTE pg_catalog.format('REVOKE %s%s ON %s FROM %s CASCADE',
      CASE WHEN g.own AND g.grantee OPERATOR(pg_catalog.=) 'pg_monitor'::pg_catalog.regrole THEN 'GRANT OPTION FOR ' ELSE '' END,
      g.privilege_type, g.target,
      CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
           ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END);
  END LOOP;
END
$acl$;

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
  probe text;
  me record;
  prior record;
  citus_cluster boolean := false;
BEGIN
  -- The claim is written whole at every renewal, deleted and inserted again, never updated: logical
  -- replication skips an UPDATE of a row the subscriber lacks (a subscription made after the claim
  -- was first written, with copy_data = false), so a peer gets the row at the next renewal. Since
  -- when this server issues under the node is kept while the node stays the same.
  DELETE FROM snowflake_node_check.claims c
  WHERE c.system_identifier = snowflake_claim_node.system_identifier AND c.timeline = snowflake_claim_node.timeline
  RETURNING c.node, c.started_at INTO prior;
  INSERT INTO snowflake_node_check.claims AS c (system_identifier, timeline, node, server, started_at, heartbeat)
  VALUES (snowflake_claim_node.system_identifier, snowflake_claim_node.timeline, snowflake_claim_node.node,
          snowflake_claim_node.server,
          CASE WHEN prior.node = snowflake_claim_node.node THEN prior.started_at ELSE now() END, now());
  SELECT snowflake_claim_node.system_identifier AS sid, snowflake_claim_node.timeline AS tli,
         snowflake_claim_node.server AS name, snowflake_claim_node.started AS since INTO me;
  RETURN QUERY
    SELECT c.server, c.started_at, c.system_identifier || ':' || c.timeline
    FROM snowflake_node_check.claims c
    WHERE c.node = snowflake_claim_node.node AND c.heartbeat > now() - make_interval(secs => stale_s)
      AND NOT (c.system_identifier = me.sid AND c.timeline <= me.tli)
      AND NOT (c.server = me.name AND c.heartbeat < me.since);
  IF to_regclass('pg_catalog.pg_dist_node') IS NOT NULL THEN
    EXECUTE 'SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_node)' INTO citus_cluster;
  END IF;
  IF citus_cluster THEN
    -- Every name is qualified: the probe runs on fresh connections with the role's search_path. Qualified
    -- operators all bind alike, left to right: the parentheses make it heartbeat > (now() - interval).
    probe := format($p$SELECT pg_catalog.json_agg(pg_catalog.json_build_array(c.server, c.started_at,
        c.system_identifier, c.timeline, c.node,
        c.heartbeat OPERATOR(pg_catalog.>) (pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.make_interval(secs => %s)),
        c.heartbeat))::pg_catalog.text FROM snowflake_node_check.claims c$p$, stale_s);
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
