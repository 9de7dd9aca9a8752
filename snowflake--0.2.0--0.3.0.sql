-- Upgrade snowflake 0.2.0 to 0.3.0: only what changed since 0.2.0. The build
-- writes snowflake--0.2.0--0.3.0.sql from this file, replacing each
-- "-- @include FILE" line with that source file, its CREATE FUNCTION as
-- CREATE OR REPLACE FUNCTION (so include only files of functions and their
-- comments and grants). A fresh CREATE EXTENSION runs the full install script
-- instead; the upgrade suite checks that both reach the same catalog. At
-- release the built script is committed as it is and this file is removed.

\echo Use "ALTER EXTENSION snowflake UPDATE TO '0.3.0'" to load this file. \quit

-- snowflake_convert_column() also takes over pgEdge snowflake's snowflake.nextval() defaults.
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

    IF target.attidentity <> '' THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
    END IF;

    FOR cur_rel IN SELECT DISTINCT u.rel FROM unnest(rels, atts) AS u(rel, att) LOOP
        SELECT string_agg(format('ALTER COLUMN %I TYPE bigint', a.attname), ', ' ORDER BY a.attnum)
        INTO stmt
        FROM unnest(rels, atts) AS u(rel, att) JOIN pg_attribute a ON a.attrelid = u.rel AND a.attnum = u.att
        WHERE u.rel = cur_rel;
        EXECUTE format('ALTER TABLE %s %s', cur_rel::regclass, stmt);
    END LOOP;

    EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s', tbl, col, nextval_sql);
    IF owned_seq IS NOT NULL AND target.attidentity = '' THEN
        EXECUTE format('DROP SEQUENCE %s', owned_seq);
    END IF;

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

-- snowflake_node_origins() no longer depends on the caller's search_path.
-- Many servers: which node's IDs reached this server through which replication origin.

CREATE OR REPLACE FUNCTION snowflake_node_origins(tbl regclass, id_column name DEFAULT 'id')
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

-- The snowflake type gets an exact <@ (untyped range literals were ambiguous on it).
CREATE FUNCTION snowflake_between(id snowflake, r tstzrange) RETURNS boolean
AS 'MODULE_PATHNAME', 'snowflake_between'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
SUPPORT snowflake_between_support;

COMMENT ON FUNCTION snowflake_between(snowflake, tstzrange) IS
'Returns whether the time of snowflake ID id lies in r. Uses the index on id: the planner rewrites it as an ID range.';

CREATE OPERATOR <@ (LEFTARG = snowflake, RIGHTARG = tstzrange, FUNCTION = snowflake_between);

COMMENT ON OPERATOR <@ (snowflake, tstzrange) IS
'Is the time of the snowflake ID on the left in the range on the right? Same as snowflake_between().';

-- This session's last ID, for clients that ask for it after an INSERT (PHP PDO, ORMs).
CREATE FUNCTION snowflake_lastval() RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_lastval'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION snowflake_lastval() IS
'Returns the ID snowflake_nextval() last returned in this session (a column default included), like lastval() for sequences; an error before the first.';

-- The durable reservation: its lead, latency and writers (monitoring), and a slow-disk fault for tests.
-- The durable reservation: its report for monitoring, and a slow disk for tests.

CREATE OR REPLACE FUNCTION snowflake_reservation(
    OUT reserved_until timestamptz, OUT lead_ms bigint, OUT write_latency_ms double precision,
    OUT renewals bigint, OUT caller_writes bigint, OUT caller_waits bigint)
AS 'MODULE_PATHNAME', 'snowflake_reservation'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION snowflake_reservation() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake_reservation() TO pg_monitor;

COMMENT ON FUNCTION snowflake_reservation() IS
'Reports this server''s durable reservation: how far it reaches, its lead past the clock, the write latency that sizes it, and the writes made ahead of need (renewals) or by callers since start. For pg_monitor.';

CREATE OR REPLACE FUNCTION snowflake_inject_write_delay(delay_ms integer) RETURNS void
AS 'MODULE_PATHNAME', 'snowflake_inject_write_delay'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION snowflake_inject_write_delay(integer) FROM PUBLIC;

COMMENT ON FUNCTION snowflake_inject_write_delay(integer) IS
'For tests only: makes every reservation write take delay_ms longer, as a slow disk would. Needs snowflake.fault_injection = on and a superuser.';
