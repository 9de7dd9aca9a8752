-- Users' privileges on the extension's functions through ALTER EXTENSION ... UPDATE
-- and pg_dump. PostgreSQL records in pg_init_privs the privileges the extension's
-- scripts leave, and pg_dump writes out only what differs from them; a GRANT or
-- REVOKE in a script records the whole list, users' grants included. Each case
-- ends with a dump restored into a new database (CONTRIBUTING.md, Building).
CREATE ROLE reporting;
-- The extensions below are created by a superuser of their own, so that the output names it
-- whoever runs the tests.
SELECT current_user AS bootstrap \gset
CREATE ROLE snowflake_owner SUPERUSER LOGIN;
-- The functions whose initial privileges, as recorded, name reporting.
\set recorded_for_reporting 'SELECT coalesce(string_agg(i.objoid::regprocedure::text, \', \' ORDER BY i.objoid::regprocedure::text), \'none\') AS recorded_as_the_extensions FROM pg_init_privs i WHERE i.classoid = \'pg_proc\'::regclass AND \'reporting\'::regrole = ANY (SELECT grantee FROM aclexplode(i.initprivs))'

-- 1. The issue's steps: a grant at 0.3.0, the update, pg_dump, a restore into a new database.
CREATE DATABASE grants_030;
\c grants_030 snowflake_owner
CREATE EXTENSION snowflake VERSION '0.3.0';
GRANT EXECUTE ON FUNCTION snowflake_stats() TO reporting;
ALTER EXTENSION snowflake UPDATE;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'snowflake') AS at_default_version
FROM pg_extension WHERE extname = 'snowflake';
:recorded_for_reporting;
CREATE DATABASE grants_030_restored;
\! pg_dump -Fc grants_030 | pg_restore --exit-on-error -d grants_030_restored && echo restored
\c grants_030_restored
SELECT has_function_privilege('reporting', 'snowflake_stats()', 'EXECUTE') AS reporting_may_execute;

-- 2. A database that ran 0.4.0's upgrade from 0.3.0 as it was released: that script granted
-- and revoked again on functions that existed. An event trigger runs those statements of it
-- inside the update, in the extension script, as the released script did.
\c contrib_regression :bootstrap
CREATE DATABASE grants_polluted;
\c grants_polluted snowflake_owner
CREATE EXTENSION snowflake VERSION '0.3.0';
GRANT EXECUTE ON FUNCTION snowflake_stats() TO reporting;
CREATE FUNCTION public.released_040_regrants() RETURNS event_trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('upgrade_grants.regranted', true) IS DISTINCT FROM 'on' THEN
        PERFORM set_config('upgrade_grants.regranted', 'on', true);
        REVOKE ALL ON FUNCTION snowflake_stats() FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION snowflake_stats() TO pg_monitor;
        REVOKE ALL ON FUNCTION snowflake_inject_clock_offset(bigint) FROM PUBLIC;
    END IF;
END $$;
CREATE EVENT TRIGGER released_040_regrants ON ddl_command_end EXECUTE FUNCTION public.released_040_regrants();
ALTER EXTENSION snowflake UPDATE TO '0.4.0';
DROP EVENT TRIGGER released_040_regrants;
:recorded_for_reporting;
-- What that did: a dump leaves the grant out.
CREATE DATABASE grants_polluted_restored;
\! pg_dump -Fc grants_polluted | pg_restore --exit-on-error -d grants_polluted_restored && echo restored
\c grants_polluted_restored
SELECT has_function_privilege('reporting', 'snowflake_stats()', 'EXECUTE') AS reporting_may_execute;
\c grants_polluted snowflake_owner
-- The update to the default version sets the initial privileges back to the extension's own.
ALTER EXTENSION snowflake UPDATE;
:recorded_for_reporting;
SELECT i.objoid::regprocedure AS function, i.initprivs
FROM pg_init_privs i JOIN pg_depend d ON d.classid = i.classoid AND d.objid = i.objoid AND d.deptype = 'e'
WHERE i.classoid = 'pg_proc'::regclass ORDER BY i.objoid::regprocedure::text;
SELECT has_function_privilege('reporting', 'snowflake_stats()', 'EXECUTE') AS reporting_still_may_execute;
\c contrib_regression :bootstrap
DROP DATABASE grants_polluted_restored;
CREATE DATABASE grants_polluted_restored;
\! pg_dump -Fc grants_polluted | pg_restore --exit-on-error -d grants_polluted_restored && echo restored
\c grants_polluted_restored
SELECT has_function_privilege('reporting', 'snowflake_stats()', 'EXECUTE') AS reporting_may_execute;

-- 3. A function dropped and created again by an update (-- @recreate in the upgrade source):
-- what the build makes of it for snowflake_reservation(), run inside the update from 0.3.0 to
-- 0.4.0 by an event trigger. reporting's grant comes back, and pg_monitor's revoke stays.
\c contrib_regression :bootstrap
CREATE DATABASE grants_recreated;
\c grants_recreated snowflake_owner
CREATE EXTENSION snowflake VERSION '0.3.0';
GRANT EXECUTE ON FUNCTION snowflake_reservation() TO reporting WITH GRANT OPTION;
REVOKE EXECUTE ON FUNCTION snowflake_reservation() FROM pg_monitor;
\set recreate_sql `echo '-- @recreate snowflake_reservation()' | awk -v helpers=src/sql/upgrade_privileges.sql -f src/sql/build_upgrade.awk src/sql/reservation.sql /dev/stdin`
CREATE TABLE public.recreate_script (sql text);
-- (In an extension script, PostgreSQL puts the control file's module_pathname for MODULE_PATHNAME.)
INSERT INTO public.recreate_script VALUES (replace(:'recreate_sql', 'MODULE_PATHNAME', '$libdir/snowflake'));
SELECT count(*) FILTER (WHERE line ~ '^DROP FUNCTION snowflake_reservation\(\);$') AS drops,
       count(*) FILTER (WHERE line ~ '^CREATE FUNCTION snowflake_reservation\($') AS creates,
       count(*) FILTER (WHERE line ~ '^(GRANT|REVOKE) .* snowflake_reservation\(\)') AS extension_privilege_statements
FROM public.recreate_script, regexp_split_to_table(sql, E'\n') AS line;
CREATE FUNCTION public.recreate_in_update() RETURNS event_trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('upgrade_grants.recreated', true) IS DISTINCT FROM 'on' THEN
        PERFORM set_config('upgrade_grants.recreated', 'on', true);
        EXECUTE (SELECT sql FROM public.recreate_script);
    END IF;
END $$;
CREATE TEMP TABLE old_oid AS SELECT 'snowflake_reservation()'::regprocedure::oid AS oid;
CREATE EVENT TRIGGER recreate_in_update ON ddl_command_end EXECUTE FUNCTION public.recreate_in_update();
ALTER EXTENSION snowflake UPDATE TO '0.4.0';
DROP EVENT TRIGGER recreate_in_update;
SELECT 'snowflake_reservation()'::regprocedure::oid <> (SELECT oid FROM old_oid) AS recreated,
       p.proacl, i.initprivs,
       (SELECT count(*) FROM pg_proc WHERE proname LIKE 'snowflake_%_privileges') AS helpers_left
FROM pg_proc p LEFT JOIN pg_init_privs i ON i.objoid = p.oid AND i.classoid = 'pg_proc'::regclass
WHERE p.oid = 'snowflake_reservation()'::regprocedure;
ALTER EXTENSION snowflake UPDATE;
CREATE DATABASE grants_recreated_restored;
\! pg_dump -Fc grants_recreated | pg_restore --exit-on-error -d grants_recreated_restored && echo restored
\c grants_recreated_restored
SELECT has_function_privilege('reporting', 'snowflake_reservation()', 'EXECUTE WITH GRANT OPTION') AS reporting_may_grant,
       has_function_privilege('pg_monitor', 'snowflake_reservation()', 'EXECUTE') AS pg_monitor_may_execute;

-- 4. docs/blocks.md's restriction of the ID functions to the application's roles, made at
-- 0.3.0: it stays through the update and a dump.
\c contrib_regression :bootstrap
CREATE ROLE app_writer LOGIN;
CREATE DATABASE grants_restricted;
\c grants_restricted snowflake_owner
CREATE EXTENSION snowflake VERSION '0.3.0';
REVOKE EXECUTE ON FUNCTION snowflake_nextval(), snowflake_nextval_block(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake_nextval(), snowflake_nextval_block(integer) TO app_writer;
ALTER EXTENSION snowflake UPDATE;
CREATE DATABASE grants_restricted_restored;
\! pg_dump -Fc grants_restricted | pg_restore --exit-on-error -d grants_restricted_restored && echo restored
\c grants_restricted_restored
SELECT f AS function, has_function_privilege('app_writer', f, 'EXECUTE') AS app_writer_may,
       has_function_privilege('reporting', f, 'EXECUTE') AS others_may
FROM unnest(ARRAY['snowflake_nextval()', 'snowflake_nextval_block(integer)']) AS f;

\c contrib_regression :bootstrap
DROP DATABASE grants_030;
DROP DATABASE grants_030_restored;
DROP DATABASE grants_polluted;
DROP DATABASE grants_polluted_restored;
DROP DATABASE grants_recreated;
DROP DATABASE grants_recreated_restored;
DROP DATABASE grants_restricted;
DROP DATABASE grants_restricted_restored;
DROP ROLE reporting, app_writer, snowflake_owner;
