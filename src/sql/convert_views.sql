-- The views around a conversion: snowflake_convert_column() drops the views on the columns that change type
-- and recreates them as they were (definition, quoted WITH options, owner, exactly their grants, comments),
-- through these internal helpers, with the caller's rights only.

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
