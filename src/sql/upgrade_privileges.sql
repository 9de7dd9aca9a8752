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
