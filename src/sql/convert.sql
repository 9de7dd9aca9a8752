-- Converting a table: snowflake_convert_column() moves a serial, identity,
-- sequence-default or pgEdge snowflake.nextval() integer column to DEFAULT snowflake_nextval() in the
-- caller's transaction, with ordinary ALTER/DROP/CREATE statements only. Its steps are internal helpers,
-- each with the caller's rights only: the column and its sequence, the columns that change type (the
-- foreign-key walk), the refusal of tables whose owner is not the caller, of partition keys and shared
-- sequences, and of Citus distribution columns; the views around it are in convert_views.sql.

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

CREATE FUNCTION snowflake_convert_column(tbl regclass, col name) RETURNS void
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
