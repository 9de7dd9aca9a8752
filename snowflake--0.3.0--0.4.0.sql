-- Upgrade snowflake 0.3.0 to 0.4.0: only what changed since 0.3.0. The build writes
-- snowflake--0.3.0--0.4.0.sql from this file, expanding each directive line (such as @new or
-- @replace) from the sources (CONTRIBUTING.md, Building). A fresh CREATE EXTENSION runs the
-- full install script instead; the upgrade suite checks that both reach the same catalog. At release
-- the built script is committed as it is and this file is removed.

\echo Use "ALTER EXTENSION snowflake UPDATE TO '0.4.0'" to load this file. \quit

-- snowflake_state(): whether IDs can be issued now, and if not why, since when and until when.
CREATE FUNCTION snowflake_state(
    OUT state text, OUT since timestamptz, OUT detail text, OUT resumes_at timestamptz)
AS 'MODULE_PATHNAME', 'snowflake_state'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION snowflake_state() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake_state() TO pg_monitor;

COMMENT ON FUNCTION snowflake_state() IS
'Reports whether snowflake_nextval() can issue an ID now (state ok), or the condition that makes it fail, since when, in words, and when it ends by itself if it does. For pg_monitor.';


-- snowflake_node_origins() labels dropped and unknown origins and leaves them out of shared_node, and says
-- what it cannot tell on a Citus table; snowflake_cluster_nodes() is new.
CREATE OR REPLACE FUNCTION snowflake_node_origins(tbl regclass, id_column name DEFAULT 'id')
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
RETURNS TABLE (server text, role text, node integer, state text, layout text, epoch timestamptz, problem text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
  ext_schema name;
  probe text;     -- what each server runs: its snowflake_stats() as one JSON text
  reports text;   -- a query giving (server, role, sort_host, sort_port, success, result) per server
  shared record;
  shared_nodes integer[] := '{}';  -- the servers flagged 'shared node', and their nodes
  shared_servers text[] := '{}';
BEGIN
  SELECT n.nspname INTO ext_schema
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake';
  probe := format($p$SELECT json_build_object('node', node, 'state', state, 'epoch', epoch,
                                               'layout', regexp_replace(layout_spec, ',epoch=-?[0-9]+$', ''))::text
                     FROM %I.snowflake_stats()$p$, ext_schema);
  IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
    -- Citus runs the probe on every active primary in its metadata, and on this server when the
    -- metadata lacks it (a coordinator that was never registered); group 0 is the coordinator's.
    reports := format($q$
      SELECT coalesce(d.nodename, current_setting('citus.local_hostname')) || ':' || coalesce(d.nodeport, current_setting('port')::int),
             CASE WHEN coalesce(d.groupid, (SELECT groupid FROM pg_dist_local_group)) = 0 THEN 'coordinator' ELSE 'worker' END,
             coalesce(d.nodename, current_setting('citus.local_hostname')), coalesce(d.nodeport, current_setting('port')::int),
             r.success, r.result
      FROM run_command_on_all_nodes(%L) r LEFT JOIN pg_dist_node d ON d.nodeid = r.nodeid$q$, probe);
  ELSE
    -- This server alone, named as libpq would reach it: its address, or its first socket directory.
    reports := format($q$
      SELECT s.host || ':' || current_setting('port'), 'standalone', s.host, current_setting('port')::int, true, (%s)
      FROM (SELECT coalesce(host(inet_server_addr()),
                            trim(split_part(current_setting('unix_socket_directories'), ',', 1))) AS host) s$q$, probe);
  END IF;
  -- A server that answered reports its state; one that did not is unreachable (no connection) or
  -- failed (an ERROR there). Layout and epoch are compared with the coordinator's (else this server's).
  FOR server, role, node, state, layout, epoch, problem IN EXECUTE format($q$
    WITH reports(server, role, sort_host, sort_port, success, result) AS (%s),
    parsed AS (
      SELECT r.*, (j.x->>'node')::integer AS node, j.x->>'state' AS state, j.x->>'layout' AS layout,
             (j.x->>'epoch')::timestamptz AS epoch
      FROM reports r, LATERAL (SELECT CASE WHEN r.success THEN r.result::json END AS x) j),
    reference AS (
      SELECT p.layout, p.epoch FROM parsed p WHERE p.success
      ORDER BY p.role = 'coordinator' DESC, p.state = 'ok' DESC LIMIT 1)
    SELECT p.server, p.role, p.node, p.state, p.layout, p.epoch,
           CASE WHEN NOT p.success AND p.result NOT LIKE 'ERROR:  %%' THEN 'unreachable'
                WHEN NOT p.success AND p.result LIKE '%%shared_preload_libraries%%' THEN 'not preloaded'
                WHEN NOT p.success THEN 'error: ' || substr(p.result, 9)
                WHEN p.state <> 'ok' THEN p.state
                WHEN count(*) FILTER (WHERE p.success AND p.node IS NOT NULL) OVER (PARTITION BY p.node) > 1 THEN 'shared node'
                WHEN p.layout <> (SELECT layout FROM reference) THEN 'layout differs'
                WHEN p.epoch <> (SELECT epoch FROM reference) THEN 'epoch differs'
           END
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
            HINT = 'Give each server a snowflake.node of its own in its postgresql.conf, then reload it.';
  END LOOP;
END
$fn$;

REVOKE ALL ON FUNCTION snowflake_cluster_nodes() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake_cluster_nodes() TO pg_monitor;

COMMENT ON FUNCTION snowflake_cluster_nodes() IS
'Lists every server of the Citus cluster (this server alone without Citus) with its snowflake.node, state, layout and epoch, and a problem: shared node, node unset (or another state that stops IDs), layout differs, epoch differs, not preloaded, unreachable, or error: and the error raised there. Warns when servers share a node. Run it after every citus_add_node. For pg_monitor.';

-- snowflake_convert_column() refuses a Citus distribution column with the steps that convert it, and drops
-- the old default before changing the type (Citus refuses the type change of a column with a sequence).
-- Converting a table: snowflake_convert_column() moves a serial, identity,
-- sequence-default or pgEdge snowflake.nextval() integer column to DEFAULT snowflake_nextval() in the
-- caller's transaction, with ordinary ALTER/DROP/CREATE statements only.
CREATE OR REPLACE FUNCTION snowflake_convert_column(tbl regclass, col name) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $convert$
DECLARE
    ext_schema name;
    nextval_sql text;
    kind "char";
    target record;
    rels oid[];     -- the columns that change type: the target and, transitively, the FK columns referencing it,
    atts int2[];    -- less those already bigint
    cur_rel oid;
    seq regclass;           -- the sequence behind the default or identity, if any
    owned_seq regclass;     -- the same when it belongs to the column (serial, identity)
    bad text;
    max_id bigint;
    first_snowflake bigint;
    view_oids oid[];
    recreate text[] := '{}';
    stmt text;
    seq_name text;
    snowflake_type regtype;  -- this extension's bigint twin: already 64-bit, never narrowed
    distributed text[];      -- "table|distribution column" of the Citus tables in the way, the target's first
    regrant text[] := '{}';  -- grants and comments, replayed once default privileges are cleared
    widened_names text;
    view_names text;
    view_names_arr text[];
BEGIN
    SELECT n.nspname INTO ext_schema
    FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake';
    nextval_sql := format('%I.snowflake_nextval()', ext_schema);
    snowflake_type := to_regtype(format('%I.snowflake', ext_schema));

    SELECT c.relkind INTO kind FROM pg_class c WHERE c.oid = tbl;
    IF kind IS NULL OR kind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '"%" is not a table', tbl USING ERRCODE = 'wrong_object_type';
    END IF;

    SELECT a.attnum, a.atttypid, a.attidentity, a.attgenerated, a.attinhcount,
           pg_get_expr(d.adbin, d.adrelid) AS default_sql, d.oid AS default_oid
    INTO target
    FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attrelid = tbl AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation "%" does not exist', col, tbl USING ERRCODE = 'undefined_column';
    END IF;
    IF target.attgenerated <> '' THEN
        RAISE EXCEPTION 'column "%" of "%" is a generated column', col, tbl
            USING ERRCODE = 'invalid_column_definition',
                  HINT = 'Only a column whose values are assigned (serial, identity, a sequence default, or none) can take snowflake IDs.';
    END IF;
    IF target.attinhcount > 0 THEN
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
    IF target.attidentity <> '' THEN
        seq := pg_get_serial_sequence(tbl::text, col);
        owned_seq := seq;
    ELSIF target.default_oid IS NOT NULL AND target.default_sql <> nextval_sql THEN
        SELECT d.refobjid INTO seq FROM pg_depend d JOIN pg_class s ON s.oid = d.refobjid AND s.relkind = 'S'
        WHERE d.classid = 'pg_attrdef'::regclass AND d.objid = target.default_oid AND d.refclassid = 'pg_class'::regclass;
        -- A sequence's nextval(), or pgEdge snowflake's snowflake.nextval() with or without its sequence.
        IF NOT (seq IS NOT NULL AND target.default_sql LIKE 'nextval(%'
                OR target.default_sql ~ '^snowflake\.nextval\((''[^'']+''::regclass)?\)$') THEN
            RAISE EXCEPTION 'column "%" of "%" has a default that is not a sequence: %', col, tbl, target.default_sql
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Drop the default first if snowflake IDs should replace it.';
        END IF;
        owned_seq := pg_get_serial_sequence(tbl::text, col);
    END IF;

    -- The target column and every foreign-key column that references it, transitively.
    WITH RECURSIVE cols(rel, att) AS (
        SELECT tbl::oid, target.attnum::int2
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
    SELECT array_agg(rel), array_agg(att) INTO rels, atts FROM cols;

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

    -- Ownership: ALTER TABLE needs it on the table and on every table whose column changes type.
    SELECT string_agg(DISTINCT c.oid::regclass::text, ', ') INTO bad
    FROM pg_class c WHERE (c.oid = tbl OR c.oid = ANY (coalesce(rels, '{}'))) AND NOT pg_has_role(current_user, c.relowner, 'USAGE');
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'must be owner of table %', bad
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Run snowflake_convert_column() as the owner of the table and of every table whose foreign key references the column.';
    END IF;

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

    IF rels IS NULL AND target.attidentity = '' AND target.default_sql IS NOT DISTINCT FROM nextval_sql THEN
        RAISE NOTICE 'column "%" of "%" already takes snowflake IDs; nothing to do', col, tbl;
        RETURN;
    END IF;

    -- Citus refuses ALTER TABLE on a distribution column (its type or its default): the target's default
    -- changes, and so does the type of every column in rels.
    IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
        EXECUTE $q$
            SELECT string_agg(format('%s.%I', u.rel::regclass, a.attname), ', ' ORDER BY u.rel::regclass::text),
                   array_agg(u.rel::regclass::text || '|' || a.attname ORDER BY u.rel <> $3, u.rel::regclass::text)
            FROM (SELECT DISTINCT * FROM unnest($1 || $3, $2 || $4) AS v(rel, att)) u
            JOIN pg_attribute a ON a.attrelid = u.rel AND a.attnum = u.att
            JOIN pg_catalog.pg_dist_partition p ON p.logicalrelid = u.rel
            WHERE p.partkey IS NOT NULL AND pg_catalog.column_to_column_name(p.logicalrelid, p.partkey) = a.attname$q$
        INTO bad, distributed USING coalesce(rels, '{}'), coalesce(atts, '{}'), tbl::oid, target.attnum;
        IF bad IS NOT NULL THEN
            -- The way round: make the tables local, convert, distribute them again (the target's table first).
            SELECT string_agg(format('SELECT create_distributed_table(%L, %L%s);', split_part(d, '|', 1), split_part(d, '|', 2),
                                     CASE WHEN i > 1 THEN format(', colocate_with => %L', split_part(distributed[1], '|', 1)) ELSE '' END),
                              ' ' ORDER BY i)
            INTO stmt FROM unnest(distributed) WITH ORDINALITY AS x(d, i);
            RAISE EXCEPTION 'column "%" of "%" cannot be converted: % is the distribution column of a Citus table', col, tbl, bad
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'Citus does not allow ALTER TABLE to change the type or the default of a distribution column. undistribute_table() copies every row to the coordinator and back; on a new table, run snowflake_convert_column() before create_distributed_table().',
                      HINT = format('Convert it while the table is local: SELECT undistribute_table(%L%s); SELECT snowflake_convert_column(%L, %L); %s',
                                    tbl, CASE WHEN cardinality(distributed) > 1 THEN ', cascade_via_foreign_keys => true' ELSE '' END,
                                    tbl, col, stmt);
        END IF;
    END IF;

    -- Existing values must stay below every new ID, so that ordering by ID stays ordering by insertion.
    EXECUTE format('SELECT max(%I)::bigint FROM %s', col, tbl) INTO max_id;
    EXECUTE format('SELECT %I.snowflake_min_id(now())', ext_schema) INTO first_snowflake;
    IF max_id >= first_snowflake THEN
        RAISE EXCEPTION 'column "%" of "%" holds values in the range of snowflake IDs', col, tbl
            USING ERRCODE = 'numeric_value_out_of_range',
                  DETAIL = format('Its largest value, %s, is not below %s, the smallest snowflake ID of this millisecond.', max_id, first_snowflake),
                  HINT = 'New IDs could collide with or sort below existing rows; renumber the rows first.';
    END IF;

    -- Views on any of the columns (or on their partitions), and views on those views, in creation order.
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
    SELECT array_agg(view ORDER BY level, view) INTO view_oids
    FROM (SELECT view, max(level) AS level FROM deps GROUP BY view) v;

    -- Names for the closing notice, taken before anything is dropped.
    seq_name := seq::text;
    SELECT string_agg(format('%s.%I', u.rel::regclass, a.attname), ', ' ORDER BY u.rel::regclass::text, a.attname)
    INTO widened_names
    FROM unnest(rels, atts) AS u(rel, att) JOIN pg_attribute a ON a.attrelid = u.rel AND a.attnum = u.att;
    SELECT string_agg(v::regclass::text, ', ' ORDER BY v::regclass::text), array_agg(v::regclass::text)
    INTO view_names, view_names_arr FROM unnest(view_oids) v;

    IF view_oids IS NOT NULL THEN
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
        WHERE c.oid = ANY (view_oids) AND w.why IS NOT NULL;
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'column "%" of "%" is used by views that snowflake_convert_column() cannot recreate', col, tbl
                USING ERRCODE = 'dependent_objects_still_exist',
                      DETAIL = format('Views: %s.', bad),
                      HINT = 'Drop them, convert the column and create them again, in one transaction.';
        END IF;
        SELECT string_agg(DISTINCT c.oid::regclass::text, ', ') INTO bad
        FROM pg_class c WHERE c.oid = ANY (view_oids) AND NOT pg_has_role(current_user, c.relowner, 'USAGE');
        IF bad IS NOT NULL THEN
            RAISE EXCEPTION 'must be owner of view %', bad
                USING ERRCODE = 'insufficient_privilege',
                      HINT = 'The views on the column are dropped and recreated, which needs their owner.';
        END IF;

        -- Each view's definition, options, owner, privileges and comments, as statements to replay.
        FOR cur_rel IN SELECT unnest(view_oids) LOOP
            SELECT recreate
                || format('CREATE %sVIEW %s%s AS %s', CASE WHEN c.relpersistence = 't' THEN 'TEMP ' ELSE '' END,
                          c.oid::regclass,
                          CASE WHEN c.reloptions IS NOT NULL THEN format(' WITH (%s)', array_to_string(c.reloptions, ', ')) ELSE '' END,
                          pg_get_viewdef(c.oid))
                || format('ALTER VIEW %s OWNER TO %s', c.oid::regclass, c.relowner::regrole),
                   regrant
                || coalesce((SELECT array_agg(format('GRANT %s ON %s TO %s%s', x.privilege_type, c.oid::regclass,
                                                     CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE x.grantee::regrole::text END,
                                                     CASE WHEN x.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END))
                             FROM aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) x), '{}')
                || coalesce((SELECT array_agg(format('COMMENT ON VIEW %s IS %L', c.oid::regclass, ds.description))
                             FROM pg_description ds
                             WHERE ds.objoid = c.oid AND ds.classoid = 'pg_class'::regclass AND ds.objsubid = 0), '{}')
                || coalesce((SELECT array_agg(format('COMMENT ON COLUMN %s.%I IS %L', c.oid::regclass, a.attname, ds.description))
                             FROM pg_description ds JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ds.objsubid
                             WHERE ds.objoid = c.oid AND ds.classoid = 'pg_class'::regclass AND ds.objsubid > 0), '{}')
            INTO recreate, regrant
            FROM pg_class c WHERE c.oid = cur_rel;
        END LOOP;
        EXECUTE 'DROP VIEW ' || (SELECT string_agg(v::regclass::text, ', ') FROM unnest(view_oids) v);
    END IF;

    -- The identity, or the default and its owned sequence, go before the type changes (Citus refuses to change
    -- the type of a column with a sequence default or an owned sequence).
    IF target.attidentity <> '' THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
    ELSIF target.default_oid IS NOT NULL THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP DEFAULT', tbl, col);
        IF owned_seq IS NOT NULL THEN
            EXECUTE format('DROP SEQUENCE %s', owned_seq);
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

    FOREACH stmt IN ARRAY recreate LOOP
        EXECUTE stmt;
    END LOOP;
    -- A new view gets the creating role's default privileges: clear them, then grant exactly the old ones.
    FOR stmt IN SELECT format('REVOKE ALL ON %s FROM %s', c.oid::regclass,
                              CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE x.grantee::regrole::text END)
                FROM unnest(view_names_arr) v JOIN pg_class c ON c.oid = v::regclass
                CROSS JOIN LATERAL (SELECT DISTINCT grantee FROM aclexplode(c.relacl)) x LOOP
        EXECUTE stmt;
    END LOOP;
    FOREACH stmt IN ARRAY regrant LOOP
        EXECUTE stmt;
    END LOOP;

    RAISE NOTICE 'column "%" of "%" now defaults to snowflake_nextval()', col, tbl
        USING DETAIL = concat_ws(' ', CASE WHEN widened_names IS NOT NULL THEN format('Widened to bigint: %s.', widened_names) END,
            CASE WHEN target.default_sql ~ '^snowflake\.nextval\(' THEN format('Replaced pgEdge snowflake''s default %s.', target.default_sql) END,
            CASE WHEN target.attidentity <> '' THEN format('Dropped the identity and its sequence %s.', seq_name)
                 WHEN owned_seq IS NOT NULL THEN format('Dropped sequence %s.', seq_name)
                 WHEN seq IS NOT NULL THEN format('Kept sequence %s, which the column does not own.', seq_name) END,
            CASE WHEN view_names IS NOT NULL THEN format('Recreated views: %s.', view_names) END,
            CASE WHEN target.default_oid IS NULL AND target.attidentity = '' AND widened_names IS NULL THEN 'The column had no default.' END);
END
$convert$;

COMMENT ON FUNCTION snowflake_convert_column(regclass, name) IS
'Moves a serial, identity, sequence-default or pgEdge snowflake.nextval() integer column to DEFAULT snowflake_nextval(): widens it and the foreign-key columns referencing it to bigint, drops the identity or owned sequence, recreates views on it; existing values are kept.';
