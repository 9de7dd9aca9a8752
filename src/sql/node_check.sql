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

-- On PostgreSQL 16 and later a role that is not a superuser may own a subscription (pg_create_subscription's
-- members). Its workers look the claims up through their schema, which USAGE lets them do: without it, a
-- FOR ALL TABLES subscription could not even be made. It writes nothing: only the owner may write the claims
-- (docs/many-servers.md, "A subscription owned by a role that is not a superuser", says what such a
-- subscription then replicates, and the statements that let it bring the claims too).
DO $usage$
BEGIN
  IF pg_catalog.to_regrole('pg_create_subscription') IS NOT NULL THEN
    GRANT USAGE ON SCHEMA snowflake_node_check TO pg_create_subscription;
  END IF;
END
$usage$;

-- Writes this server's claim when it has none, when its node or name changed, or when renew is above 0
-- (the server issued IDs since its last write; 0.5.0's library passes its staleness bound there, and so
-- renews at every pass), and returns every claim on its node by another server, however old: a claim
-- stands until its server moves it to another node or an operator releases it (snowflake_release_claim()).
-- Claims of this server's own past are not another server's: an earlier timeline of its cluster (before a
-- promotion), and each claim of another cluster written under its name before this cluster was
-- created (pg_upgrade: its system identifier holds its initdb's time, on the same host's clock); such a
-- claim stands for itself only, so that a forged one cannot hide another server's. Since when a server
-- issues under a node is kept while the node stays the same, taken over from its own past on that node,
-- and otherwise set after every claim on the node it sees, so that a server that claims a node after
-- seeing another's claim on it is the later one whatever the two clocks say; a claim more than an hour
-- ahead of this server's clock, which no server's check believes, moves neither. A Citus server that could not be asked is a row of its own, with NULL claimed_at and identity,
-- and the error in claimant. started, this server's start, is no longer read (0.5.0's library passes it).
CREATE FUNCTION snowflake_claim_node(node integer, server text, system_identifier text, timeline integer,
                                     renew integer, started timestamptz)
RETURNS TABLE (claimant text, claimed_at timestamptz, identity text)
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  probe text;
  me record;
  prior record;
  since timestamptz;
  citus_cluster boolean := false;
BEGIN
  SELECT snowflake_claim_node.system_identifier AS sid, snowflake_claim_node.timeline AS tli,
         snowflake_claim_node.server AS name,
         to_timestamp(floor(snowflake_claim_node.system_identifier::numeric / 4294967296)) AS created INTO me;
  RETURN QUERY
    SELECT c.server, c.started_at, c.system_identifier || ':' || c.timeline
    FROM snowflake_node_check.claims c
    WHERE c.node = snowflake_claim_node.node
      AND NOT (c.system_identifier = me.sid AND c.timeline <= me.tli)
      AND NOT (c.server = me.name AND c.heartbeat < me.created AND c.system_identifier <> me.sid);
  IF to_regclass('pg_catalog.pg_dist_node') IS NOT NULL THEN
    EXECUTE 'SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_node)' INTO citus_cluster;
  END IF;
  IF citus_cluster THEN
    -- A server that takes the connection and never answers (a frozen one) holds the pass one interval at
    -- most, and is then a server not asked; Citus's own default, 30 s, outlasts the bound after which the
    -- check reads 'stale'. Until this function returns, and never above the setting.
    PERFORM set_config('citus.node_connection_timeout', least(
      (SELECT s.setting::integer FROM pg_settings s WHERE s.name = 'citus.node_connection_timeout'),
      greatest(1, (SELECT s.setting::integer FROM pg_settings s WHERE s.name = 'snowflake.node_check_interval')) * 1000
    )::text, true);
    -- Every name is qualified: the probe runs on fresh connections with the role's search_path.
    probe := $p$SELECT pg_catalog.json_agg(pg_catalog.json_build_array(c.server, c.started_at,
        c.system_identifier, c.timeline, c.node, true, c.heartbeat))::pg_catalog.text
        FROM snowflake_node_check.claims c$p$;
    RETURN QUERY EXECUTE $q$
      WITH r AS MATERIALIZED (SELECT * FROM run_command_on_all_nodes($1))
      SELECT e->>0, (e->>1)::timestamptz, (e->>2) || ':' || (e->>3)
      FROM r, json_array_elements(CASE WHEN r.success AND r.result <> '' THEN r.result::json ELSE '[]' END) e
      WHERE (e->>4)::integer = $2
        AND NOT ((e->>2) = $3 AND (e->>3)::integer <= $4)
        AND NOT ((e->>0) = $5 AND (e->>6)::timestamptz < $6 AND (e->>2) <> $3)
      UNION ALL
      SELECT coalesce(d.nodename || ':' || d.nodeport, 'node ' || r.nodeid) || ': ' || r.result, NULL, NULL
      FROM r LEFT JOIN pg_dist_node d ON d.nodeid = r.nodeid
      WHERE NOT r.success$q$
      USING probe, node, me.sid, me.tli, me.name, me.created;
  END IF;
  SELECT c.node, c.server, c.started_at INTO prior
  FROM snowflake_node_check.claims c WHERE c.system_identifier = me.sid AND c.timeline = me.tli;
  IF prior.node IS DISTINCT FROM snowflake_claim_node.node OR prior.server IS DISTINCT FROM me.name OR renew > 0 THEN
    since := CASE WHEN prior.node = snowflake_claim_node.node THEN prior.started_at END;
    IF since IS NULL THEN
      SELECT min(c.started_at) INTO since FROM snowflake_node_check.claims c
      WHERE c.node = snowflake_claim_node.node AND NOT (c.system_identifier = me.sid AND c.timeline = me.tli)
        AND c.started_at <= now() + interval '1 hour'
        AND ((c.system_identifier = me.sid AND c.timeline < me.tli)
             OR (c.server = me.name AND c.heartbeat < me.created AND c.system_identifier <> me.sid));
    END IF;
    IF since IS NULL THEN
      SELECT greatest(now(), max(c.started_at) + interval '1 millisecond') INTO since FROM snowflake_node_check.claims c
      WHERE c.node = snowflake_claim_node.node AND NOT (c.system_identifier = me.sid AND c.timeline = me.tli)
        AND c.started_at <= now() + interval '1 hour';
    END IF;
    -- Written last, after the Citus probe, so that the transaction holds an xid only for the write. The
    -- claim is written whole, deleted and inserted again, never updated: logical replication skips
    -- an UPDATE of a row the subscriber lacks (a subscription made after the claim was first written,
    -- with copy_data = false), so a peer gets the row at the next write.
    DELETE FROM snowflake_node_check.claims c WHERE c.system_identifier = me.sid AND c.timeline = me.tli;
    INSERT INTO snowflake_node_check.claims AS c (system_identifier, timeline, node, server, started_at, heartbeat)
    VALUES (me.sid, me.tli, snowflake_claim_node.node, me.name, since, now());
  END IF;
END
$fn$;

REVOKE ALL ON FUNCTION snowflake_claim_node(integer, text, text, integer, integer, timestamptz) FROM PUBLIC;

COMMENT ON FUNCTION snowflake_claim_node(integer, text, text, integer, integer, timestamptz) IS
'For the node check worker: writes this server''s claim on its node when it is new or changed, or when the server issued IDs since, and returns every claim on the node by another server. Not for direct use; EXECUTE is revoked from PUBLIC.';

-- Removes the claims of the server with that identity (system identifier ':' timeline, as
-- snowflake_node_status().node_conflict and the claims table show it) from this database: what a
-- refusal waits for when the other server is gone for good. Logical replication carries the DELETE to
-- the subscribers of this database; a server that is alive writes its claim again when it next issues IDs.
CREATE FUNCTION snowflake_release_claim(identity text) RETURNS integer
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  released integer;
BEGIN
  DELETE FROM snowflake_node_check.claims c
  WHERE c.system_identifier || ':' || c.timeline = snowflake_release_claim.identity;
  GET DIAGNOSTICS released = ROW_COUNT;
  IF released = 0 THEN
    RAISE EXCEPTION 'no claim of a server with identity "%" in database "%"', identity, current_database()
      USING ERRCODE = 'no_data_found',
            HINT = 'The identity is the system identifier and timeline the refusal names, such as 7301234567890123456:1; SELECT * FROM snowflake_node_check.claims lists them.';
  END IF;
  RAISE LOG 'snowflake: the claim of % was released by %', identity, session_user;
  RETURN released;
END
$fn$;

REVOKE ALL ON FUNCTION snowflake_release_claim(text) FROM PUBLIC;

COMMENT ON FUNCTION snowflake_release_claim(text) IS
'Removes the node claim of the server with that identity (system identifier:timeline) from this database, so that a server refusing IDs because of it may issue again; for a server that is gone for good. For superusers.';
