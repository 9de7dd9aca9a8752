-- A function new in this version is created by its update with plain CREATE FUNCTION
-- (issue 28 item 6), so a function already standing under its signature in the
-- extension's schema (planted there by a role with CREATE on it) makes the update
-- fail loudly instead of being taken over. Checked for every function a fresh install
-- has and 0.4.0 lacks.
CREATE DATABASE planted_fresh;
\c planted_fresh
CREATE EXTENSION snowflake;
SELECT string_agg(quote_literal(p.oid::regprocedure::text), ', ') AS fresh_functions
FROM pg_depend d JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake') \gset
\c contrib_regression
DROP DATABASE planted_fresh;
CREATE DATABASE planted;
\c planted
CREATE EXTENSION snowflake VERSION '0.4.0';
CREATE TEMP TABLE new_functions AS
SELECT f FROM unnest(ARRAY[:fresh_functions]::text[]) AS f WHERE to_regprocedure(f) IS NULL;
SELECT count(*) > 0 AS this_version_adds_functions FROM new_functions;

-- One of them planted in public, the extension's schema: the update fails and changes nothing.
DO $$BEGIN EXECUTE (SELECT format('CREATE FUNCTION public.%s RETURNS void LANGUAGE sql AS %L', f, 'SELECT')
                    FROM new_functions ORDER BY f LIMIT 1); END$$;
\set VERBOSITY sqlstate
ALTER EXTENSION snowflake UPDATE;
\set VERBOSITY default
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';
SELECT count(*) AS planted_now_members FROM new_functions n
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = to_regprocedure(n.f) AND d.deptype = 'e';
DO $$BEGIN EXECUTE (SELECT format('DROP FUNCTION public.%s', f) FROM new_functions ORDER BY f LIMIT 1); END$$;

-- Each of them, one at a time.
CREATE TEMP TABLE refused (f text, sqlstate text);
DO $$
DECLARE
    fn text;
BEGIN
    FOR fn IN SELECT f FROM new_functions ORDER BY f LOOP
        EXECUTE format('CREATE FUNCTION public.%s RETURNS void LANGUAGE sql AS %L', fn, 'SELECT');
        BEGIN
            ALTER EXTENSION snowflake UPDATE;
            INSERT INTO refused VALUES (fn, 'none');
        EXCEPTION WHEN OTHERS THEN
            INSERT INTO refused VALUES (fn, SQLSTATE);
        END;
        EXECUTE format('DROP FUNCTION public.%s', fn);
    END LOOP;
END $$;
SELECT count(*) = (SELECT count(*) FROM new_functions) AS each_tried,
       count(*) FILTER (WHERE sqlstate = '42723') = count(*) AS each_refused_as_duplicate_function
FROM refused;
SELECT f AS taken_over, sqlstate FROM refused WHERE sqlstate <> '42723' ORDER BY f;

-- Without a planted function the update goes through.
ALTER EXTENSION snowflake UPDATE;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'snowflake') AS at_default_version
FROM pg_extension WHERE extname = 'snowflake';
\c contrib_regression
DROP DATABASE planted;
