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
