-- Upgrade snowflake 0.5.0 to 0.6.0: only what changed since 0.5.0. The build writes
-- snowflake--0.5.0--0.6.0.sql from this file, expanding each directive line (such as @new or
-- @replace) from the sources (CONTRIBUTING.md, Building). A fresh CREATE EXTENSION runs the
-- full install script instead; the upgrade suite checks that both reach the same catalog. At release
-- the built script is committed as it is and this file is removed.

\echo Use "ALTER EXTENSION snowflake UPDATE TO '0.6.0'" to load this file. \quit

-- First, before anything changes: this server must run 0.6.0's library. A server still running the
-- old one (installed, not yet restarted: it is preloaded) would fail at the first new C function with
-- 42883 "could not find function ... in file", naming a file that has it. 0.6.0's library defines
-- snowflake.mask_keys, preloaded or not, and 0.5.0's does not; a backend where no snowflake setting is
-- defined has not loaded the library yet, and loads the new file at the first CREATE FUNCTION.
DO $running$
BEGIN
  IF EXISTS (SELECT FROM pg_catalog.pg_settings WHERE pg_catalog.starts_with(name, 'snowflake.'))
     AND pg_catalog.current_setting('snowflake.mask_keys', true) IS NULL THEN
    RAISE EXCEPTION 'snowflake 0.6.0 is installed, but this server still runs the library of an older version'
      USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'The server loads snowflake.so at start (shared_preload_libraries): it keeps the old library until it restarts.',
            HINT = 'Restart PostgreSQL, then run ALTER EXTENSION snowflake UPDATE again; nothing was changed.';
  END IF;
END
$running$;

-- Public IDs (docs/public-ids.md).
-- @new snowflake_mask(bigint)
-- @new snowflake_unmask(bigint)
-- @new snowflake_mask_text(bigint)
-- @new snowflake_unmask_text(text)

-- The node check fails closed (issue 34): a claim stands until released, and is written only when it
-- changes or the server issued IDs since (its fifth argument, renamed renew, says so).
-- @recreate snowflake_claim_node(integer, text, text, integer, integer, timestamptz)
-- @new snowflake_release_claim(text)

-- The claims 0.5.0 ignored already as stale (a heartbeat older than three intervals and 10 s), but
-- this server's own: from 0.6.0 on a claim stands until released, and these would begin refusals no
-- live server stands behind. A live server behind one writes it again when it next issues IDs.
DELETE FROM snowflake_node_check.claims c
WHERE c.heartbeat OPERATOR(pg_catalog.<) (pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.make_interval(
        secs => (3 OPERATOR(pg_catalog.*) pg_catalog.date_part('epoch',
          coalesce(pg_catalog.current_setting('snowflake.node_check_interval', true), '5s')::pg_catalog.interval))
        OPERATOR(pg_catalog.+) 10))
  AND c.system_identifier OPERATOR(pg_catalog.<>) (SELECT s.system_identifier::pg_catalog.text
                                                   FROM pg_catalog.pg_control_system() s);

-- The epoch and layout on record in this database (issue 33, item 6), which pg_upgrade carries along.
-- @new snowflake_layout_on_record()
-- @new snowflake_record_layout()

-- A role granted snowflake_cluster_nodes() without pg_read_all_settings runs it (issue 37, item 7).
-- @replace snowflake_cluster_nodes()

-- The node check's claims (issue 34, item 10): no role but their owner writes them, whatever default privileges granted at install; users' SELECT and USAGE grants stay theirs.
DO $repair$
DECLARE
  g record;
BEGIN
  -- A subscription owned by a role that is not a superuser (PostgreSQL 16+) looks the claims up through their
  -- schema (issue 34, item 2), as the install script lets it.
  IF pg_catalog.to_regrole('pg_create_subscription') IS NOT NULL THEN
    GRANT USAGE ON SCHEMA snowflake_node_check TO pg_create_subscription;
  END IF;
  -- Every privilege of another role on the claims but SELECT, and on their schema but USAGE: write
  -- (INSERT, UPDATE, DELETE, TRUNCATE), TRIGGER, REFERENCES, MAINTAIN (PostgreSQL 17+), CREATE.
  FOR g IN
    SELECT 'SCHEMA snowflake_node_check' AS target, a.grantee, a.privilege_type
    FROM pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) a
    WHERE n.nspname OPERATOR(pg_catalog.=) 'snowflake_node_check' AND a.grantee OPERATOR(pg_catalog.<>) n.nspowner
      AND a.privilege_type OPERATOR(pg_catalog.<>) 'USAGE'
    UNION ALL
    SELECT 'TABLE snowflake_node_check.claims', a.grantee, a.privilege_type
    FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a
    WHERE c.oid OPERATOR(pg_catalog.=) 'snowflake_node_check.claims'::pg_catalog.regclass
      AND a.grantee OPERATOR(pg_catalog.<>) c.relowner AND a.privilege_type OPERATOR(pg_catalog.<>) 'SELECT'
  LOOP
    EXECUTE pg_catalog.format('REVOKE %s ON %s FROM %s CASCADE', g.privilege_type, g.target,
      CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
           ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END);
  END LOOP;
  -- A REVOKE in an extension's script records the object's whole privilege list, users' grants included,
  -- in pg_init_privs as the extension's own, and pg_dump then leaves those grants out (CONTRIBUTING.md,
  -- Building): the initial privileges of the schema and the table go back to exactly what the install
  -- script's statements give, the owner's defaults, pg_monitor's USAGE or SELECT and (16+) pg_create_subscription's USAGE, and PostgreSQL
  -- 17+'s dependencies on roles go with the roles no longer named there.
  FOR g IN
    SELECT 'pg_catalog.pg_namespace'::pg_catalog.regclass AS catalog, n.oid AS object,
           pg_catalog.acldefault('n', n.nspowner) OPERATOR(pg_catalog.||)
             pg_catalog.makeaclitem('pg_monitor'::pg_catalog.regrole, n.nspowner, 'USAGE', false)
             OPERATOR(pg_catalog.||) pg_catalog.array_remove(ARRAY[pg_catalog.makeaclitem(
               pg_catalog.to_regrole('pg_create_subscription'), n.nspowner, 'USAGE', false)], NULL) AS acl
    FROM pg_catalog.pg_namespace n WHERE n.nspname OPERATOR(pg_catalog.=) 'snowflake_node_check'
    UNION ALL
    SELECT 'pg_catalog.pg_class'::pg_catalog.regclass, c.oid,
           pg_catalog.acldefault('r', c.relowner) OPERATOR(pg_catalog.||)
             pg_catalog.makeaclitem('pg_monitor'::pg_catalog.regrole, c.relowner, 'SELECT', false)
    FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) 'snowflake_node_check.claims'::pg_catalog.regclass
  LOOP
    UPDATE pg_catalog.pg_init_privs i SET initprivs = g.acl
    WHERE i.objoid OPERATOR(pg_catalog.=) g.object AND i.classoid OPERATOR(pg_catalog.=) g.catalog
      AND i.objsubid OPERATOR(pg_catalog.=) 0 AND i.initprivs OPERATOR(pg_catalog.<>) g.acl;
    DELETE FROM pg_catalog.pg_shdepend d
    WHERE d.dbid OPERATOR(pg_catalog.=) (SELECT oid FROM pg_catalog.pg_database
                                         WHERE datname OPERATOR(pg_catalog.=) pg_catalog.current_database())
      AND d.classid OPERATOR(pg_catalog.=) g.catalog AND d.objid OPERATOR(pg_catalog.=) g.object
      AND d.objsubid OPERATOR(pg_catalog.=) 0 AND d.deptype OPERATOR(pg_catalog.=) 'i'
      AND d.refobjid NOT IN (SELECT a.grantee FROM pg_catalog.aclexplode(g.acl) a
                             UNION SELECT a.grantor FROM pg_catalog.aclexplode(g.acl) a);
  END LOOP;
END
$repair$;
