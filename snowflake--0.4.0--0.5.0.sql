-- Upgrade snowflake 0.4.0 to 0.5.0: only what changed since 0.4.0. The build writes
-- snowflake--0.4.0--0.5.0.sql from this file, expanding each directive line (such as @new or
-- @replace) from the sources (CONTRIBUTING.md, Building). A fresh CREATE EXTENSION runs the
-- full install script instead; the upgrade suite checks that both reach the same catalog. At release
-- the built script is committed as it is and this file is removed.

\echo Use "ALTER EXTENSION snowflake UPDATE TO '0.5.0'" to load this file. \quit

-- 0.4.0's own upgrade from 0.3.0, as released, granted again on functions that existed, and so recorded
-- the grants users had made on them in pg_init_privs as the extension's, which pg_dump then left out:
-- the initial privileges of every function go back to what the extension's scripts grant.

-- Privileges across an upgrade (added by snowflake's build for -- @recreate and -- @init-privileges, see
-- src/sql/build_upgrade.awk; dropped at the end of this script). PostgreSQL records in pg_init_privs the
-- privileges an extension's scripts leave on its objects, and pg_dump writes out only what differs from
-- them; but every GRANT or REVOKE in a script records the object's whole privilege list, users' grants
-- included. These helpers keep the users' changes on a function that is dropped and created again, and
-- set pg_init_privs to what the extension's own statements give, which only a superuser's catalog update
-- can do. Temporary: nothing of them stays in the extension.
CREATE TEMP TABLE snowflake_kept_privileges (signature text PRIMARY KEY, owner oid, acl aclitem[], init aclitem[]);

-- Makes pg_init_privs hold acl (none when NULL) as fn's initial privileges, and drops the dependencies on
-- roles that PostgreSQL 17 and later record for them, for the roles no longer named there.
CREATE FUNCTION pg_temp.snowflake_set_init_privileges(fn regprocedure, acl aclitem[]) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $helper$
BEGIN
    IF acl IS NULL THEN
        DELETE FROM pg_init_privs i WHERE i.objoid = fn AND i.classoid = 'pg_proc'::regclass::oid AND i.objsubid = 0;
    ELSE
        UPDATE pg_init_privs i SET initprivs = acl
        WHERE i.objoid = fn AND i.classoid = 'pg_proc'::regclass::oid AND i.objsubid = 0 AND i.initprivs <> acl;
    END IF;
    DELETE FROM pg_shdepend d
    WHERE d.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND d.classid = 'pg_proc'::regclass::oid AND d.objid = fn AND d.objsubid = 0 AND d.deptype = 'i'
      AND d.refobjid NOT IN (SELECT a.grantee FROM aclexplode(acl) a UNION SELECT a.grantor FROM aclexplode(acl) a);
END
$helper$;

-- Keeps fn's privileges and initial privileges aside, before it is dropped; refuses, naming them, while
-- users' objects depend on it (DROP FUNCTION would fail with a hint to CASCADE, which would drop them).
CREATE FUNCTION pg_temp.snowflake_keep_privileges(fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $helper$
DECLARE
    dependents text;
BEGIN
    SELECT string_agg(DISTINCT coalesce(r.ev_class::regclass::text, pg_describe_object(d.classid, d.objid, d.objsubid)),
                      ', ')
    INTO dependents
    FROM pg_depend d LEFT JOIN pg_rewrite r ON d.classid = 'pg_rewrite'::regclass::oid AND r.oid = d.objid
    WHERE d.refclassid = 'pg_proc'::regclass::oid AND d.refobjid = fn AND d.deptype = 'n';
    IF dependents IS NOT NULL THEN
        RAISE EXCEPTION 'this update of snowflake recreates %, and these depend on it: %', fn, dependents
            USING ERRCODE = 'dependent_objects_still_exist',
                  DETAIL = 'Its result gains columns, which PostgreSQL adds only by dropping the function and creating it again. Nothing was changed.',
                  HINT = 'Keep each view''s definition (SELECT pg_get_viewdef(''name''::regclass)) and its grants, drop the views, run the update again, then create them again.';
    END IF;
    INSERT INTO snowflake_kept_privileges
    SELECT fn::text, p.proowner, p.proacl, i.initprivs
    FROM pg_proc p
    LEFT JOIN pg_init_privs i ON i.objoid = p.oid AND i.classoid = 'pg_proc'::regclass::oid AND i.objsubid = 0
    WHERE p.oid = fn;
END
$helper$;

-- Makes again, on the new fn, what users changed on the old one (the privileges it had that its initial
-- ones lacked, and the reverse), once the extension's own GRANT and REVOKE have run; then pg_init_privs
-- holds only the extension's.
CREATE FUNCTION pg_temp.snowflake_restore_privileges(fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $helper$
DECLARE
    kept snowflake_kept_privileges;
    extension_acl aclitem[];
    change record;
BEGIN
    SELECT * INTO STRICT kept FROM snowflake_kept_privileges k WHERE k.signature = fn::text;
    SELECT p.proacl INTO extension_acl FROM pg_proc p WHERE p.oid = fn;
    FOR change IN
        WITH had AS (SELECT a.grantee, a.privilege_type, a.is_grantable
                     FROM aclexplode(coalesce(kept.acl, acldefault('f', kept.owner))) a),
        given AS (SELECT a.grantee, a.privilege_type, a.is_grantable
                  FROM aclexplode(coalesce(kept.init, acldefault('f', kept.owner))) a)
        SELECT 1 AS step, format('REVOKE %s ON FUNCTION %s FROM %s', g.privilege_type, fn,
                                 CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE g.grantee::regrole::text END) AS sql
        FROM (SELECT * FROM given EXCEPT SELECT * FROM had) g
        UNION ALL
        SELECT 2, format('GRANT %s ON FUNCTION %s TO %s%s', h.privilege_type, fn,
                         CASE WHEN h.grantee = 0 THEN 'PUBLIC' ELSE h.grantee::regrole::text END,
                         CASE WHEN h.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
        FROM (SELECT * FROM had EXCEPT SELECT * FROM given) h
        ORDER BY 1, 2
    LOOP
        EXECUTE change.sql;
    END LOOP;
    PERFORM pg_temp.snowflake_set_init_privileges(fn, extension_acl);
    DELETE FROM snowflake_kept_privileges k WHERE k.signature = fn::text;
END
$helper$;

-- Sets the initial privileges of the extension's function fn, if it exists, to what the sources' statements
-- on it give: the default (EXECUTE for PUBLIC and the owner), less PUBLIC's when revoke_public, plus
-- EXECUTE for each of grantees, in order.
CREATE FUNCTION pg_temp.snowflake_repair_init_privileges(fn text, revoke_public boolean, grantees name[]) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $helper$
DECLARE
    member regprocedure;
    owner oid;
BEGIN
    SELECT p.oid, p.proowner INTO member, owner
    FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass::oid AND d.objid = p.oid AND d.deptype = 'e'
    JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass::oid AND d.refobjid = e.oid AND e.extname = 'snowflake'
    WHERE p.oid = to_regprocedure(format('%s.%s', e.extnamespace::regnamespace, fn));
    IF member IS NOT NULL THEN
        PERFORM pg_temp.snowflake_set_init_privileges(member,
            ARRAY(SELECT makeaclitem(a.grantee, a.grantor, a.privilege_type, a.is_grantable)
                  FROM aclexplode(acldefault('f', owner)) a WHERE NOT (revoke_public AND a.grantee = 0))
            || ARRAY(SELECT makeaclitem(g.role::text::regrole, owner, 'EXECUTE', false)
                     FROM unnest(grantees) WITH ORDINALITY AS g(role, n) ORDER BY g.n));
    END IF;
END
$helper$;

SELECT pg_temp.snowflake_repair_init_privileges(s.fn, s.revoke_public, s.grantees) FROM (VALUES
    ('snowflake_stats()', true, ARRAY['pg_monitor']::name[]),
    ('snowflake_state()', true, ARRAY['pg_monitor']::name[]),
    ('snowflake_inject_clock_offset(bigint)', true, ARRAY[]::name[]),
    ('snowflake_reservation()', true, ARRAY['pg_monitor']::name[]),
    ('snowflake_inject_write_delay(integer)', true, ARRAY[]::name[]),
    ('snowflake_adopt_layout()', true, ARRAY[]::name[]),
    ('snowflake_cluster_nodes()', true, ARRAY['pg_monitor']::name[]),
    ('snowflake_node_status()', true, ARRAY['pg_monitor']::name[]),
    ('snowflake_claim_node(integer, text, text, integer, integer, timestamptz)', true, ARRAY[]::name[])
) AS s(fn, revoke_public, grantees);

-- snowflake_cluster_nodes() schema-qualifies every name in the probe it sends to each server, which runs it
-- with the connecting role's own search_path, and reports where each server's node came from.
SELECT pg_temp.snowflake_keep_privileges('snowflake_cluster_nodes()');
DROP FUNCTION snowflake_cluster_nodes();
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
    -- This server alone, named as libpq would reach it: its address, or its first socket directory.
    BEGIN
      EXECUTE origin INTO local_origin;
    EXCEPTION WHEN undefined_function OR insufficient_privilege THEN
      local_origin := NULL;
    END;
    reports := format($q$
      SELECT s.host || ':' || current_setting('port'), 'standalone', s.host, current_setting('port')::int, true, (%s), %L
      FROM (SELECT coalesce(host(inet_server_addr()),
                            trim(split_part(current_setting('unix_socket_directories'), ',', 1))) AS host) s$q$,
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
SELECT pg_temp.snowflake_restore_privileges('snowflake_cluster_nodes()');

-- snowflake_convert_column() refuses to alter a table the caller does not own itself (a CHECK constraint
-- would run its owner's code with the caller's rights) and quotes the WITH options of the views it
-- recreates; its steps are internal helpers.
-- The column col of tbl as the conversion needs it: its number, identity, default and the sequence behind
-- that (seq), which the column owns (owned_seq) when it is a serial or identity; refuses (42809, 42703,
-- 42611, 42P16, 0A000, 55000) a column that cannot take snowflake IDs, changing nothing.
CREATE FUNCTION snowflake_convert_target(tbl regclass, col name, nextval_sql text,
    OUT attnum smallint, OUT attidentity "char", OUT default_sql text, OUT default_oid oid,
    OUT seq regclass, OUT owned_seq regclass)
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    kind "char";
    generated "char";
    inherited integer;
BEGIN
    SELECT c.relkind INTO kind FROM pg_class c WHERE c.oid = tbl;
    IF kind IS NULL OR kind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '"%" is not a table', tbl USING ERRCODE = 'wrong_object_type';
    END IF;

    SELECT a.attnum, a.attidentity, a.attgenerated, a.attinhcount, pg_get_expr(d.adbin, d.adrelid), d.oid
    INTO attnum, attidentity, generated, inherited, default_sql, default_oid
    FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attrelid = tbl AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation "%" does not exist', col, tbl USING ERRCODE = 'undefined_column';
    END IF;
    IF generated <> '' THEN
        RAISE EXCEPTION 'column "%" of "%" is a generated column', col, tbl
            USING ERRCODE = 'invalid_column_definition',
                  HINT = 'Only a column whose values are assigned (serial, identity, a sequence default, or none) can take snowflake IDs.';
    END IF;
    IF inherited > 0 THEN
        RAISE EXCEPTION 'column "%" of "%" is inherited from its parent table', col, tbl
            USING ERRCODE = 'invalid_table_definition',
                  HINT = format('Convert the column of the root table, %s; its partitions follow.',
                                (SELECT t.relid::regclass FROM pg_partition_tree(pg_partition_root(tbl)) t WHERE t.level = 0));
    END IF;

    IF EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
               WHERE i.inhparent = tbl AND NOT c.relispartition) THEN
        RAISE EXCEPTION '"%" has inheritance children', tbl
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'snowflake_convert_column() follows partitions, not legacy (INHERITS) table inheritance.',
                  HINT = 'Detach the children (ALTER TABLE ... NO INHERIT), make each child''s column bigint DEFAULT snowflake_nextval(), convert the parent, then attach them again.';
    END IF;

    -- The default or identity being replaced.
    IF attidentity <> '' THEN
        seq := pg_get_serial_sequence(tbl::text, col);
        owned_seq := seq;
    ELSIF default_oid IS NOT NULL AND default_sql <> nextval_sql THEN
        SELECT d.refobjid INTO seq FROM pg_depend d JOIN pg_class s ON s.oid = d.refobjid AND s.relkind = 'S'
        WHERE d.classid = 'pg_attrdef'::regclass AND d.objid = default_oid AND d.refclassid = 'pg_class'::regclass;
        -- A sequence's nextval(), or pgEdge snowflake's snowflake.nextval() with or without its sequence.
        IF NOT (seq IS NOT NULL AND default_sql LIKE 'nextval(%'
                OR default_sql ~ '^snowflake\.nextval\((''[^'']+''::regclass)?\)$') THEN
            RAISE EXCEPTION 'column "%" of "%" has a default that is not a sequence: %', col, tbl, default_sql
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Drop the default first if snowflake IDs should replace it.';
        END IF;
        owned_seq := pg_get_serial_sequence(tbl::text, col);
    END IF;
END
$fn$;

COMMENT ON FUNCTION snowflake_convert_target(regclass, name, text) IS
'Internal to snowflake_convert_column(): the column to convert, its default and sequence; refuses a column that cannot take snowflake IDs.';

-- The column col_num of tbl and every foreign-key column that references it, transitively.
CREATE FUNCTION snowflake_convert_dependents(tbl regclass, col_num smallint, OUT rel oid, OUT att smallint)
RETURNS SETOF record
LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
    WITH RECURSIVE cols(rel, att) AS (
        SELECT tbl::oid, col_num
        UNION
        SELECT c.conrelid, c.conkey[k.i]
        FROM cols
        JOIN pg_attribute ca ON ca.attrelid = cols.rel AND ca.attnum = cols.att
        -- keys on the table itself or directly on one of its partitions (same column name there)
        CROSS JOIN LATERAL (SELECT cols.rel AS relid UNION SELECT relid FROM pg_partition_tree(cols.rel)) pt
        JOIN pg_attribute pa ON pa.attrelid = pt.relid AND pa.attname = ca.attname
        JOIN pg_constraint c ON c.contype = 'f' AND c.confrelid = pt.relid AND c.conparentid = 0
        CROSS JOIN LATERAL generate_subscripts(c.confkey, 1) AS k(i)
        WHERE c.confkey[k.i] = pa.attnum
    )
    SELECT cols.rel, cols.att FROM cols
$fn$;

COMMENT ON FUNCTION snowflake_convert_dependents(regclass, smallint) IS
'Internal to snowflake_convert_column(): the column and every foreign-key column referencing it, transitively.';

-- Refuses (42501), changing nothing, when the conversion would alter a table that the caller does not own
-- itself: a table whose column changes type (or a partition or child of one, which ALTER TABLE recurses
-- into), or tbl. Changing a column's type evaluates the table's CHECK constraints and generated columns
-- with the rights of the role running it, so another role's code would run with the caller's rights
-- (a superuser's included); owning through superuser or membership does not count. The HINT gives the
-- statements, each for the role that must run it, that let the owner of tbl convert it alone.
CREATE FUNCTION snowflake_convert_check_owners(tbl regclass, col name, rels oid[], atts smallint[]) RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    caller oid := (SELECT r.oid FROM pg_roles r WHERE r.rolname = current_user);
    converter oid := (SELECT c.relowner FROM pg_class c WHERE c.oid = tbl);  -- who must run the conversion
    altered oid[];  -- the tables altered, each with the table in rels (or tbl) it belongs to, and its owner
    roots oid[];
    owners oid[];
    foreign_tables text;
    steps text;
BEGIN
    WITH RECURSIVE tree(rel, root) AS (
        SELECT DISTINCT r, r FROM unnest(rels || tbl::oid) AS r
        UNION
        SELECT i.inhrelid, t.root FROM tree t JOIN pg_inherits i ON i.inhparent = t.rel
    )
    SELECT array_agg(t.rel), array_agg(t.root), array_agg(c.relowner) INTO altered, roots, owners
    FROM tree t JOIN pg_class c ON c.oid = t.rel;
    SELECT string_agg(format('%s (owned by %s)', a.rel::regclass, a.owner::regrole), ', ' ORDER BY a.rel::regclass::text)
    INTO foreign_tables
    FROM unnest(altered, owners) AS a(rel, owner) WHERE a.owner <> caller;
    IF foreign_tables IS NULL THEN
        RETURN;
    END IF;
    -- Each other owner widens its own columns; a partition or child, whose column cannot change alone,
    -- goes to the owner of the converted table; then that owner converts.
    SELECT string_agg(format('as %s: %s;', s.role, s.statement), ' ' ORDER BY s.step, s.statement) INTO steps
    FROM (SELECT 1 AS step, a.owner::regrole::text AS role,
                 format('ALTER TABLE %s %s', a.rel::regclass,
                        (SELECT string_agg(format('ALTER COLUMN %I TYPE bigint', t.attname), ', ' ORDER BY t.attnum)
                         FROM unnest(rels, atts) AS u(rel, att) JOIN pg_attribute t ON t.attrelid = u.rel AND t.attnum = u.att
                         WHERE u.rel = a.rel)) AS statement
          FROM unnest(altered, roots, owners) AS a(rel, root, owner)
          WHERE a.rel = a.root AND a.rel <> tbl AND a.owner <> converter
          UNION ALL
          SELECT 2, a.owner::regrole::text, format('ALTER TABLE %s OWNER TO %s', a.rel::regclass, converter::regrole)
          FROM unnest(altered, roots, owners) AS a(rel, root, owner)
          JOIN unnest(altered, owners) AS r(rel, owner) ON r.rel = a.root
          WHERE a.rel <> a.root AND r.owner = converter AND a.owner <> converter
          UNION ALL
          SELECT 3, converter::regrole::text, format('SELECT snowflake_convert_column(%L, %L)', tbl, col)) s;
    RAISE EXCEPTION 'snowflake_convert_column() would alter tables that % does not own: %', current_user, foreign_tables
        USING ERRCODE = 'insufficient_privilege',
              DETAIL = 'Changing a column''s type runs its table''s CHECK constraints and generated columns with the rights of the role that changes it, so each table must be altered by its own owner (a superuser or a member of the owning role is not enough).',
              HINT = 'Run these, each connected as the role named (not through SET ROLE, which the table''s code could undo), ' || steps;
END
$fn$;

COMMENT ON FUNCTION snowflake_convert_check_owners(regclass, name, oid[], smallint[]) IS
'Internal to snowflake_convert_column(): refuses to alter a table the caller does not own itself, with the statements that let each owner do its part.';

-- Refuses (42P16, 2BP01), changing nothing, when a column in rels/atts is in a partition key (of its table
-- or of a partition), or when seq, the sequence behind col's default, also feeds other columns.
CREATE FUNCTION snowflake_convert_check_keys(tbl regclass, col name, rels oid[], atts smallint[], seq regclass)
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    bad text;
BEGIN
    -- Columns in a partition key cannot change type, in the table or in any of its partitions.
    SELECT string_agg(DISTINCT format('%s.%I', pt.partrelid::regclass, a.attname), ', ') INTO bad
    FROM unnest(rels, atts) AS u(rel, att)
    JOIN pg_attribute ua ON ua.attrelid = u.rel AND ua.attnum = u.att
    CROSS JOIN LATERAL (SELECT u.rel AS relid UNION SELECT relid FROM pg_partition_tree(u.rel)) t
    JOIN pg_partitioned_table pt ON pt.partrelid = t.relid
    JOIN pg_attribute a ON a.attrelid = pt.partrelid AND a.attname = ua.attname
    WHERE a.attnum = ANY (pt.partattrs::int2[])
       OR EXISTS (SELECT 1 FROM pg_depend d
                  WHERE d.classid = 'pg_class'::regclass AND d.objid = pt.partrelid AND d.objsubid = 0
                    AND d.refclassid = 'pg_class'::regclass AND d.refobjid = pt.partrelid
                    AND d.refobjsubid = a.attnum AND d.deptype IN ('i', 'n', 'a'));
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'column "%" of "%" cannot be converted: % is part of a partition key', col, tbl, bad
            USING ERRCODE = 'invalid_table_definition',
                  HINT = 'A partition key column cannot change type; partition by a snowflake ID in a new table and copy the rows.';
    END IF;

    -- A sequence that also feeds other columns is not this column's to drop.
    IF seq IS NOT NULL THEN
        SELECT string_agg(format('%s.%I', d.adrelid::regclass, a.attname), ', ') INTO bad
        FROM pg_depend dep
        JOIN pg_attrdef d ON dep.classid = 'pg_attrdef'::regclass AND dep.objid = d.oid
        JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
        WHERE dep.refclassid = 'pg_class'::regclass AND dep.refobjid = seq
          AND NOT (a.attname = col AND (d.adrelid = tbl OR d.adrelid IN (SELECT relid FROM pg_partition_tree(tbl))));
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'sequence % of column "%" of "%" is shared', seq, col, tbl
                USING ERRCODE = 'dependent_objects_still_exist',
                      DETAIL = format('The defaults of %s also draw from it.', bad),
                      HINT = 'Give the other columns their own sequence (or convert them) first.';
        END IF;
    END IF;
END
$fn$;

COMMENT ON FUNCTION snowflake_convert_check_keys(regclass, name, oid[], smallint[], regclass) IS
'Internal to snowflake_convert_column(): refuses a column in a partition key, and a sequence that other columns share.';

-- Refuses (0A000), changing nothing, when the default of col (attribute col_num of tbl) or the type of a
-- column in rels/atts is a Citus distribution column, which Citus does not let ALTER TABLE change; the
-- HINT gives the statements that convert it while the tables are local.
CREATE FUNCTION snowflake_convert_check_citus(tbl regclass, col name, col_num smallint, rels oid[], atts smallint[])
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    bad text;
    distributed text[];      -- "table|distribution column" of the Citus tables in the way, the target's first
    steps text;
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        RETURN;
    END IF;
    EXECUTE $q$
        SELECT string_agg(format('%s.%I', u.rel::regclass, a.attname), ', ' ORDER BY u.rel::regclass::text),
               array_agg(u.rel::regclass::text || '|' || a.attname ORDER BY u.rel <> $3, u.rel::regclass::text)
        FROM (SELECT DISTINCT * FROM unnest($1 || $3, $2 || $4) AS v(rel, att)) u
        JOIN pg_attribute a ON a.attrelid = u.rel AND a.attnum = u.att
        JOIN pg_catalog.pg_dist_partition p ON p.logicalrelid = u.rel
        WHERE p.partkey IS NOT NULL AND pg_catalog.column_to_column_name(p.logicalrelid, p.partkey) = a.attname$q$
    INTO bad, distributed USING coalesce(rels, '{}'), coalesce(atts, '{}'), tbl::oid, col_num;
    IF bad IS NULL THEN
        RETURN;
    END IF;
    -- The way round: make the tables local, convert, distribute them again (the target's table first).
    SELECT string_agg(format('SELECT create_distributed_table(%L, %L%s);', split_part(d, '|', 1), split_part(d, '|', 2),
                             CASE WHEN i > 1 THEN format(', colocate_with => %L', split_part(distributed[1], '|', 1)) ELSE '' END),
                      ' ' ORDER BY i)
    INTO steps FROM unnest(distributed) WITH ORDINALITY AS x(d, i);
    RAISE EXCEPTION 'column "%" of "%" cannot be converted: % is the distribution column of a Citus table', col, tbl, bad
        USING ERRCODE = 'feature_not_supported',
              DETAIL = 'Citus does not allow ALTER TABLE to change the type or the default of a distribution column. undistribute_table() copies every row to the coordinator and back; on a new table, run snowflake_convert_column() before create_distributed_table().',
              HINT = format('Convert it while the table is local: SELECT undistribute_table(%L%s); SELECT snowflake_convert_column(%L, %L); %s',
                            tbl, CASE WHEN cardinality(distributed) > 1 THEN ', cascade_via_foreign_keys => true' ELSE '' END,
                            tbl, col, steps);
END
$fn$;

COMMENT ON FUNCTION snowflake_convert_check_citus(regclass, name, smallint, oid[], smallint[]) IS
'Internal to snowflake_convert_column(): refuses a Citus distribution column, with the statements that convert it.';

-- The views on the columns rels/atts (or on their partitions), and the views on those views, in creation
-- order; refuses (2BP01, 42501), changing nothing, views it cannot recreate exactly or whose owner the
-- caller could not act for.
CREATE FUNCTION snowflake_convert_views(tbl regclass, col name, rels oid[], atts smallint[]) RETURNS oid[]
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    views oid[];
    bad text;
BEGIN
    WITH RECURSIVE cols(rel, att) AS (
        SELECT t.relid, a.attnum
        FROM unnest(rels, atts) AS u(rel, att)
        JOIN pg_attribute ua ON ua.attrelid = u.rel AND ua.attnum = u.att
        CROSS JOIN LATERAL (SELECT u.rel AS relid UNION SELECT relid FROM pg_partition_tree(u.rel)) t
        JOIN pg_attribute a ON a.attrelid = t.relid AND a.attname = ua.attname
    ), deps(view, level) AS (
        SELECT r.ev_class, 1
        FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid
        JOIN cols ON d.refobjid = cols.rel AND d.refobjsubid = cols.att
        WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass AND r.ev_class <> d.refobjid
        UNION ALL
        SELECT r.ev_class, deps.level + 1
        FROM deps JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = deps.view
        JOIN pg_rewrite r ON d.classid = 'pg_rewrite'::regclass AND r.oid = d.objid
        WHERE r.ev_class <> deps.view
    )
    SELECT array_agg(view ORDER BY level, view) INTO views
    FROM (SELECT view, max(level) AS level FROM deps GROUP BY view) v;
    IF views IS NULL THEN
        RETURN NULL;
    END IF;

    SELECT string_agg(format('%s (%s)', c.oid::regclass, why), ', ' ORDER BY c.oid::regclass::text) INTO bad
    FROM pg_class c
    CROSS JOIN LATERAL (
        SELECT CASE
            WHEN c.relkind <> 'v' THEN 'a materialized view'
            WHEN EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid) THEN 'has triggers'
            WHEN EXISTS (SELECT 1 FROM pg_rewrite r WHERE r.ev_class = c.oid AND r.rulename <> '_RETURN') THEN 'has rules'
            WHEN EXISTS (SELECT 1 FROM pg_attrdef d WHERE d.adrelid = c.oid) THEN 'has column defaults'
            WHEN EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attacl IS NOT NULL) THEN 'has column privileges'
        END AS why
    ) w
    WHERE c.oid = ANY (views) AND w.why IS NOT NULL;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'column "%" of "%" is used by views that snowflake_convert_column() cannot recreate', col, tbl
            USING ERRCODE = 'dependent_objects_still_exist',
                  DETAIL = format('Views: %s.', bad),
                  HINT = 'Drop them, convert the column and create them again, in one transaction.';
    END IF;
    -- Recreating a view runs none of its owner's code, so acting for its owner (as a superuser) is enough.
    SELECT string_agg(DISTINCT c.oid::regclass::text, ', ') INTO bad
    FROM pg_class c WHERE c.oid = ANY (views) AND NOT pg_has_role(current_user, c.relowner, 'USAGE');
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'must be owner of view %', bad
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'The views on the column are dropped and recreated, which needs their owner.';
    END IF;
    RETURN views;
END
$fn$;

COMMENT ON FUNCTION snowflake_convert_views(regclass, name, oid[], smallint[]) IS
'Internal to snowflake_convert_column(): the views to drop and recreate around the type change, in creation order.';

-- The statements that recreate each of views as it is (definition, quoted WITH options, temporary status,
-- owner), and those that give it back its grants and comments once default privileges are cleared.
CREATE FUNCTION snowflake_convert_view_statements(views oid[], OUT recreate text[], OUT regrant text[])
LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
    SELECT array_agg(s.stmt ORDER BY v.n, s.k, s.j) FILTER (WHERE s.k < 2),
           array_agg(s.stmt ORDER BY v.n, s.k, s.j) FILTER (WHERE s.k >= 2)
    FROM unnest(views) WITH ORDINALITY AS v(oid, n)
    JOIN pg_class c ON c.oid = v.oid
    CROSS JOIN LATERAL (
        SELECT 0 AS k, 0::bigint AS j,
               format('CREATE %sVIEW %s%s AS %s', CASE WHEN c.relpersistence = 't' THEN 'TEMP ' ELSE '' END, c.oid::regclass,
                      (SELECT format(' WITH (%s)', string_agg(format('%I = %L', o.option_name, o.option_value), ', '))
                       FROM pg_options_to_table(c.reloptions) o HAVING count(*) > 0),
                      pg_get_viewdef(c.oid)) AS stmt
        UNION ALL
        SELECT 1, 0, format('ALTER VIEW %s OWNER TO %s', c.oid::regclass, c.relowner::regrole)
        UNION ALL
        SELECT 2, x.j, format('GRANT %s ON %s TO %s%s', x.privilege_type, c.oid::regclass,
                              CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE x.grantee::regrole::text END,
                              CASE WHEN x.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
        FROM aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) WITH ORDINALITY AS x(grantor, grantee, privilege_type, is_grantable, j)
        UNION ALL
        SELECT 3, 0, format('COMMENT ON VIEW %s IS %L', c.oid::regclass, ds.description)
        FROM pg_description ds WHERE ds.objoid = c.oid AND ds.classoid = 'pg_class'::regclass AND ds.objsubid = 0
        UNION ALL
        SELECT 4, ds.objsubid, format('COMMENT ON COLUMN %s.%I IS %L', c.oid::regclass, a.attname, ds.description)
        FROM pg_description ds JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ds.objsubid
        WHERE ds.objoid = c.oid AND ds.classoid = 'pg_class'::regclass AND ds.objsubid > 0
    ) s
$fn$;

COMMENT ON FUNCTION snowflake_convert_view_statements(oid[]) IS
'Internal to snowflake_convert_column(): the statements that recreate the views as they are, and give back their grants and comments.';

-- Gives the recreated views (by name) exactly their old grants: clears what the creating role's default
-- privileges added, then runs regrant (grants and comments, from snowflake_convert_view_statements()).
CREATE FUNCTION snowflake_convert_regrant(views text[], regrant text[]) RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    stmt text;
BEGIN
    FOR stmt IN SELECT format('REVOKE ALL ON %s FROM %s', c.oid::regclass,
                              CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE x.grantee::regrole::text END)
                FROM unnest(views) v JOIN pg_class c ON c.oid = v::regclass
                CROSS JOIN LATERAL (SELECT DISTINCT grantee FROM aclexplode(c.relacl)) x LOOP
        EXECUTE stmt;
    END LOOP;
    FOREACH stmt IN ARRAY coalesce(regrant, '{}') LOOP
        EXECUTE stmt;
    END LOOP;
END
$fn$;

COMMENT ON FUNCTION snowflake_convert_regrant(text[], text[]) IS
'Internal to snowflake_convert_column(): gives recreated views exactly their old grants and comments.';
CREATE OR REPLACE FUNCTION snowflake_convert_column(tbl regclass, col name) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $convert$
DECLARE
    ext_schema name;
    nextval_sql text;
    target record;          -- the column: attnum, attidentity, default_sql, default_oid, seq, owned_seq
    rels oid[];     -- the columns that change type: the target and, transitively, the FK columns referencing it,
    atts int2[];    -- less those already bigint
    cur_rel oid;
    seq_name text;          -- the sequence's name, for the closing notice
    bad text;
    max_id bigint;
    first_snowflake bigint;
    view_oids oid[];
    views text[];            -- the same, by name: they are recreated with new OIDs
    statements record;       -- recreate, regrant: the views' statements
    stmt text;
    snowflake_type regtype;  -- this extension's bigint twin: already 64-bit, never narrowed
    widened_names text;
    view_names text;
BEGIN
    SELECT n.nspname INTO ext_schema
    FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake';
    nextval_sql := format('%I.snowflake_nextval()', ext_schema);
    snowflake_type := to_regtype(format('%I.snowflake', ext_schema));

    EXECUTE format('SELECT * FROM %I.snowflake_convert_target($1, $2, $3)', ext_schema) INTO target USING tbl, col, nextval_sql;

    EXECUTE format('SELECT array_agg(rel), array_agg(att) FROM %I.snowflake_convert_dependents($1, $2)', ext_schema)
    INTO rels, atts USING tbl, target.attnum;
    SELECT string_agg(format('%s.%I (%s)', a.attrelid::regclass, a.attname, format_type(a.atttypid, a.atttypmod)), ', ')
    INTO bad
    FROM unnest(rels, atts) AS u(rel, att) JOIN pg_attribute a ON a.attrelid = u.rel AND a.attnum = u.att
    WHERE a.atttypid NOT IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype, snowflake_type);
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'column "%" of "%" cannot hold snowflake IDs', col, tbl
            USING ERRCODE = 'datatype_mismatch',
                  DETAIL = format('Not an integer column: %s.', bad),
                  HINT = 'Only smallint, integer and bigint columns (serial, bigserial, identity, a sequence default) are converted.';
    END IF;

    -- From here on, only the columns that are not bigint yet: nothing else changes type.
    SELECT array_agg(u.rel), array_agg(u.att) INTO rels, atts
    FROM unnest(rels, atts) AS u(rel, att) JOIN pg_attribute a ON a.attrelid = u.rel AND a.attnum = u.att
    WHERE a.atttypid NOT IN ('int8'::regtype, snowflake_type);

    EXECUTE format('SELECT %I.snowflake_convert_check_owners($1, $2, $3, $4)', ext_schema) USING tbl, col, rels, atts;

    EXECUTE format('SELECT %I.snowflake_convert_check_keys($1, $2, $3, $4, $5)', ext_schema) USING tbl, col, rels, atts, target.seq;

    IF rels IS NULL AND target.attidentity = '' AND target.default_sql IS NOT DISTINCT FROM nextval_sql THEN
        RAISE NOTICE 'column "%" of "%" already takes snowflake IDs; nothing to do', col, tbl;
        RETURN;
    END IF;

    EXECUTE format('SELECT %I.snowflake_convert_check_citus($1, $2, $3, $4, $5)', ext_schema)
    USING tbl, col, target.attnum, rels, atts;

    -- Existing values must stay below every new ID, so that ordering by ID stays ordering by insertion.
    EXECUTE format('SELECT max(%I)::bigint FROM %s', col, tbl) INTO max_id;
    EXECUTE format('SELECT %I.snowflake_min_id(now())', ext_schema) INTO first_snowflake;
    IF max_id >= first_snowflake THEN
        RAISE EXCEPTION 'column "%" of "%" holds values in the range of snowflake IDs', col, tbl
            USING ERRCODE = 'numeric_value_out_of_range',
                  DETAIL = format('Its largest value, %s, is not below %s, the smallest snowflake ID of this millisecond.', max_id, first_snowflake),
                  HINT = 'New IDs could collide with or sort below existing rows; renumber the rows first.';
    END IF;

    EXECUTE format('SELECT %I.snowflake_convert_views($1, $2, $3, $4)', ext_schema) INTO view_oids USING tbl, col, rels, atts;
    -- Names for the closing notice, taken before anything is dropped.
    seq_name := target.seq::text;
    SELECT string_agg(format('%s.%I', u.rel::regclass, a.attname), ', ' ORDER BY u.rel::regclass::text, a.attname)
    INTO widened_names
    FROM unnest(rels, atts) AS u(rel, att) JOIN pg_attribute a ON a.attrelid = u.rel AND a.attnum = u.att;
    IF view_oids IS NOT NULL THEN
        SELECT array_agg(v::regclass::text), string_agg(v::regclass::text, ', ' ORDER BY v::regclass::text)
        INTO views, view_names FROM unnest(view_oids) v;
        EXECUTE format('SELECT * FROM %I.snowflake_convert_view_statements($1)', ext_schema) INTO statements USING view_oids;
        EXECUTE 'DROP VIEW ' || array_to_string(views, ', ');
    END IF;

    -- The identity, or the default and its owned sequence, go before the type changes (Citus refuses to change
    -- the type of a column with a sequence default or an owned sequence).
    IF target.attidentity <> '' THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
    ELSIF target.default_oid IS NOT NULL THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP DEFAULT', tbl, col);
        IF target.owned_seq IS NOT NULL THEN
            EXECUTE format('DROP SEQUENCE %s', target.owned_seq);
        END IF;
    END IF;

    FOR cur_rel IN SELECT DISTINCT u.rel FROM unnest(rels, atts) AS u(rel, att) LOOP
        SELECT string_agg(format('ALTER COLUMN %I TYPE bigint', a.attname), ', ' ORDER BY a.attnum)
        INTO stmt
        FROM unnest(rels, atts) AS u(rel, att) JOIN pg_attribute a ON a.attrelid = u.rel AND a.attnum = u.att
        WHERE u.rel = cur_rel;
        EXECUTE format('ALTER TABLE %s %s', cur_rel::regclass, stmt);
    END LOOP;

    EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s', tbl, col, nextval_sql);

    IF view_oids IS NOT NULL THEN
        FOREACH stmt IN ARRAY statements.recreate LOOP
            EXECUTE stmt;
        END LOOP;
        EXECUTE format('SELECT %I.snowflake_convert_regrant($1, $2)', ext_schema) USING views, statements.regrant;
    END IF;

    RAISE NOTICE 'column "%" of "%" now defaults to snowflake_nextval()', col, tbl
        USING DETAIL = concat_ws(' ', CASE WHEN widened_names IS NOT NULL THEN format('Widened to bigint: %s.', widened_names) END,
            CASE WHEN target.default_sql ~ '^snowflake\.nextval\(' THEN format('Replaced pgEdge snowflake''s default %s.', target.default_sql) END,
            CASE WHEN target.attidentity <> '' THEN format('Dropped the identity and its sequence %s.', seq_name)
                 WHEN target.owned_seq IS NOT NULL THEN format('Dropped sequence %s.', seq_name)
                 WHEN target.seq IS NOT NULL THEN format('Kept sequence %s, which the column does not own.', seq_name) END,
            CASE WHEN view_names IS NOT NULL THEN format('Recreated views: %s.', view_names) END,
            CASE WHEN target.default_oid IS NULL AND target.attidentity = '' AND widened_names IS NULL THEN 'The column had no default.' END);
END
$convert$;

COMMENT ON FUNCTION snowflake_convert_column(regclass, name) IS
'Moves a serial, identity, sequence-default or pgEdge snowflake.nextval() integer column to DEFAULT snowflake_nextval(): widens it and the foreign-key columns referencing it to bigint, drops the identity or owned sequence, recreates views on it; existing values are kept.';

-- snowflake_nextval() is PARALLEL RESTRICTED: it runs in a parallel plan's leader, so that
-- snowflake_lastval() is the statement's last ID.
-- PARALLEL RESTRICTED: it runs in the leader of a parallel plan, never in a worker, so that
-- snowflake_lastval() (the leader's own) is the last ID of the statement. Blocks stay PARALLEL SAFE.
CREATE OR REPLACE FUNCTION snowflake_nextval() RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_nextval'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION snowflake_nextval() IS
'Returns a new snowflake ID: unique on this server and greater than every ID it issued before. Needs shared_preload_libraries and snowflake.node.';


-- snowflake_adopt_layout() puts a changed epoch or layout on record above every ID issued before it.
CREATE FUNCTION snowflake_adopt_layout() RETURNS timestamptz
AS 'MODULE_PATHNAME', 'snowflake_adopt_layout'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION snowflake_adopt_layout() FROM PUBLIC;

COMMENT ON FUNCTION snowflake_adopt_layout() IS
'On a server that refuses IDs because snowflake.epoch or snowflake.layout changed, puts the new ones on record with a reservation above every ID issued under the old ones, so that after a restart every new ID is larger; returns the time new IDs start above. Refuses an epoch that would make new IDs smaller. For superusers.';

-- snowflake_node_status() reports where the node came from and what the node check found.
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


-- The node check: each server's claim on its node, in a schema of its own, and the function its
-- worker runs.
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

DROP FUNCTION pg_temp.snowflake_keep_privileges(regprocedure), pg_temp.snowflake_restore_privileges(regprocedure),
    pg_temp.snowflake_repair_init_privileges(text, boolean, name[]), pg_temp.snowflake_set_init_privileges(regprocedure, aclitem[]);
DROP TABLE pg_temp.snowflake_kept_privileges;
