-- docs/security.md and docs/settings.md against the catalog, so that neither can go
-- stale: the functions PUBLIC can run (all their overloads) and those it cannot, as
-- security.md lists them, and each setting's context, as settings.md's table gives it.
\set security_md `cat docs/security.md`
\set settings_md `cat docs/settings.md`

-- Each of the extension's functions, by name: whether PUBLIC may run all, or any, of its overloads.
CREATE TEMP TABLE by_name AS
SELECT p.proname::text AS name, bool_and(has_function_privilege('public', p.oid, 'EXECUTE')) AS all_public,
       bool_or(has_function_privilege('public', p.oid, 'EXECUTE')) AS any_public
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')
GROUP BY p.proname;
-- The names security.md lists for PUBLIC (between its markers), and in its table of the others.
CREATE TEMP TABLE listed_public AS
SELECT DISTINCT m[1] AS name
FROM regexp_matches(substring(:'security_md' FROM '<!-- PUBLIC can run: [^>]*-->(.*)<!-- end of the list -->'),
                    '`(snowflake[a-z0-9_]*)`', 'g') AS m;
CREATE TEMP TABLE listed_others AS
SELECT DISTINCT n[1] AS name
FROM regexp_split_to_table(:'security_md', E'\n') AS line, regexp_matches(line, '`(snowflake[a-z0-9_]*)\(\)`', 'g') AS n
WHERE line ~ '^\| `snowflake';
SELECT (SELECT count(*) FROM listed_public) > 0 AS public_listed, (SELECT count(*) FROM listed_others) > 0 AS others_listed;
SELECT name, 'listed for PUBLIC, which cannot run it' AS problem
FROM listed_public WHERE name NOT IN (SELECT name FROM by_name WHERE all_public)
UNION ALL
SELECT name, 'PUBLIC can run it, not listed' FROM by_name WHERE any_public AND name NOT IN (SELECT name FROM listed_public)
UNION ALL
SELECT name, 'listed as revoked, PUBLIC can run it' FROM listed_others WHERE name NOT IN (SELECT name FROM by_name WHERE NOT any_public)
UNION ALL
SELECT name, 'revoked from PUBLIC, not listed' FROM by_name WHERE NOT any_public AND name NOT IN (SELECT name FROM listed_others)
ORDER BY 1;

-- Each row of settings.md's table: the setting and the context its Context column names.
CREATE TEMP TABLE listed_settings AS
SELECT m[1] AS name, m[2] AS context
FROM regexp_split_to_table(:'settings_md', E'\n') AS line,
     regexp_matches(line, '^\| `(snowflake\.[a-z_]+)` \|[^|]*\|[^|]*\| `([a-z-]+)`: ') AS m;
SELECT count(*) > 0 AS settings_listed FROM listed_settings;
SELECT coalesce(s.name, l.name) AS setting, s.context AS in_pg_settings, l.context AS in_settings_md
FROM (SELECT name, context FROM pg_settings WHERE name LIKE 'snowflake.%') s
FULL JOIN listed_settings l ON l.name = s.name
WHERE s.context IS DISTINCT FROM l.context AND coalesce(s.name, l.name) <> 'snowflake.mask_keys'
ORDER BY 1;
-- snowflake.mask_keys holds keys: pg_settings hides it from every role, and settings.md names its context.
SELECT (SELECT context FROM listed_settings WHERE name = 'snowflake.mask_keys') AS mask_keys_in_settings_md,
       (SELECT count(*) FROM pg_settings WHERE name = 'snowflake.mask_keys') AS mask_keys_rows_in_pg_settings;
-- None can be set by a role for itself: every context is postmaster or sighup.
SELECT count(*) AS settable_per_session FROM pg_settings
WHERE name LIKE 'snowflake.%' AND context NOT IN ('postmaster', 'sighup');
