-- The SQL API as installed: every function with its labels and a comment,
-- and every setting as pg_settings shows it.
CREATE EXTENSION snowflake;
SELECT e.extversion = a.default_version AS at_default_version
FROM pg_extension e JOIN pg_available_extensions a ON a.name = e.extname WHERE e.extname = 'snowflake';

SELECT p.oid::regprocedure AS function,
       pg_get_function_result(p.oid) AS returns,
       p.provolatile AS volatility,
       p.proisstrict AS strict,
       p.proparallel AS parallel,
       obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')
ORDER BY p.oid::regprocedure::text;

SELECT oprname, oprleft::regtype, oprright::regtype, oprresult::regtype, oprcode::regprocedure,
       obj_description(o.oid, 'pg_operator') IS NOT NULL AS commented
FROM pg_operator o JOIN pg_proc p ON p.oid = o.oprcode WHERE p.proname = 'snowflake_between'
ORDER BY oprleft::regtype::text;

SELECT name, setting, unit, context, vartype, min_val, max_val, enumvals
FROM pg_settings WHERE name LIKE 'snowflake.%' ORDER BY name;

-- The extension's one table is in a schema of its own, never in the schema it is installed in,
-- where the tools that manage an application's tables (Rails' schema.rb, ORMs' schema diffs) would
-- meet it; so the extension cannot be moved to another schema.
SELECT c.oid::regclass AS extension_table, c.relnamespace = e.extnamespace AS in_installed_schema,
       obj_description(c.relnamespace, 'pg_namespace') IS NOT NULL AS schema_commented
FROM pg_class c
JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f');
CREATE SCHEMA elsewhere;
ALTER EXTENSION snowflake SET SCHEMA elsewhere;
DROP SCHEMA elsewhere;

-- The epoch and layout on record in this database are the server's; only a superuser rewrites them,
-- and with nothing changed there is nothing to adopt.
SELECT epoch_ms = current_setting('snowflake.epoch')::bigint AS epoch_on_record,
       (SELECT layout_spec FROM snowflake_stats()) = layout || ',epoch=' || epoch_ms AS layout_on_record
FROM snowflake_layout_on_record();
SELECT snowflake_record_layout();
CREATE ROLE snowflake_recorder;
GRANT EXECUTE ON FUNCTION snowflake_record_layout() TO snowflake_recorder;
SET ROLE snowflake_recorder;
SELECT snowflake_record_layout();
\echo :SQLSTATE
RESET ROLE;
REVOKE EXECUTE ON FUNCTION snowflake_record_layout() FROM snowflake_recorder;
DROP ROLE snowflake_recorder;
SELECT snowflake_adopt_layout();
\echo :SQLSTATE
