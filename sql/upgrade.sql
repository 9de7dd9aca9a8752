-- The upgrade path. Creates the oldest supported release (0.1.0), calls each
-- of its functions through the current library, then runs ALTER EXTENSION
-- snowflake UPDATE one release step at a time up to the default version,
-- listing the functions and their labels after every step. Finally the
-- updated catalog is compared with a fresh CREATE EXTENSION in another
-- database. The steps come from the installed scripts, so a new release's
-- upgrade script adds a step here by itself.

-- The extension's functions with their labels, from the catalogs (not part of the extension).
CREATE SCHEMA upgrade_check;
CREATE VIEW upgrade_check.functions AS
SELECT e.extversion AS version,
       p.oid::regprocedure AS function,
       CASE p.provolatile WHEN 'i' THEN 'immutable' WHEN 's' THEN 'stable' ELSE 'volatile' END AS volatility,
       CASE WHEN p.proisstrict THEN 'strict' ELSE 'called on null input' END AS strictness,
       CASE p.proparallel WHEN 's' THEN 'safe' WHEN 'r' THEN 'restricted' ELSE 'unsafe' END AS parallel
FROM pg_extension e
JOIN pg_depend d ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid
                AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
JOIN pg_proc p ON p.oid = d.objid
WHERE e.extname = 'snowflake';

-- Every version with an install or upgrade script, oldest first.
CREATE VIEW upgrade_check.versions AS
SELECT version FROM pg_available_extension_versions
WHERE name = 'snowflake'
ORDER BY string_to_array(version, '.')::int[];
SELECT version FROM upgrade_check.versions;
SELECT default_version FROM pg_available_extensions WHERE name = 'snowflake';

CREATE EXTENSION snowflake VERSION '0.1.0';
SELECT * FROM upgrade_check.functions ORDER BY function::text;

-- A table whose IDs come from the 0.1.0 extension.
CREATE TABLE upgrade_check.items (id bigint PRIMARY KEY DEFAULT snowflake_nextval());
INSERT INTO upgrade_check.items SELECT FROM generate_series(1, 3);

-- The current library behind the 0.1.0 definitions: one call of each function,
-- in one transaction so pg_stat_xact_user_functions can tell which were called.
BEGIN;
SELECT snowflake_nextval() > 0 AS nextval_positive;
SELECT snowflake_timestamp(910499571847892992) AT TIME ZONE 'UTC' AS twitter_vector_time;
SELECT * FROM snowflake_parse(910499571847892992);
SELECT node, layout, ids_issued > 0 AS issued FROM snowflake_stats();
SELECT snowflake_min_id('2017-09-20 13:43:08.849+00') <= 910499571847892992
   AND snowflake_max_id('2017-09-20 13:43:08.849+00') >= 910499571847892992 AS bounds_hold;
SELECT snowflake_id_range(tstzrange('2017-09-20 13:43:08.849+00', '2017-09-20 13:43:08.850+00'))
       = int8range(snowflake_range_first_id(tstzrange('2017-09-20 13:43:08.849+00', '2017-09-20 13:43:08.850+00')),
                   snowflake_range_last_id(tstzrange('2017-09-20 13:43:08.849+00', '2017-09-20 13:43:08.850+00')), '[]')
       AS range_ends_agree;
-- A volatile argument keeps the planner from rewriting the call, so the C function runs.
SELECT snowflake_between(snowflake_nextval(), tstzrange(now() - interval '1 hour', NULL)) AS new_id_is_recent;
SELECT (snowflake_parse(snowflake_backfill_id('2015-06-01 12:00:00.123+00', 42))).node AS backfill_node;
SELECT snowflake_inject_clock_offset(0);
SELECT node, origin, ids, shared_node FROM snowflake_node_origins('upgrade_check.items');
-- The support function is called by the planner, not the executor: it rewrites this filter.
EXPLAIN (COSTS OFF)
SELECT * FROM generate_series(1::bigint, 3) AS g(id)
WHERE id <@ tstzrange('2017-09-20 13:43:08.849+00', '2017-09-20 13:43:08.850+00');
-- The functions this transaction did not call (only the planner support function).
SELECT function FROM upgrade_check.functions f
WHERE NOT EXISTS (SELECT FROM pg_stat_xact_user_functions s WHERE s.funcid = f.function::oid AND s.calls > 0)
ORDER BY function::text;
COMMIT;

-- One ALTER EXTENSION ... UPDATE TO per later version, each followed by the listing.
SELECT format('ALTER EXTENSION snowflake UPDATE TO %L', version),
       'SELECT * FROM upgrade_check.functions ORDER BY function::text'
FROM upgrade_check.versions
WHERE string_to_array(version, '.')::int[] > string_to_array('0.1.0', '.')::int[]
\gexec
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'snowflake') AS at_default_version
FROM pg_extension WHERE extname = 'snowflake';
-- The table made under 0.1.0 still takes its default from the updated extension.
INSERT INTO upgrade_check.items DEFAULT VALUES;
SELECT count(*) AS items, count(DISTINCT id) AS distinct_ids FROM upgrade_check.items;

-- A fingerprint of everything the extension owns: members, function definitions
-- and labels, comments, privileges and the initial privileges pg_dump compares them
-- with (pg_init_privs), operators, types, casts, operator classes and families with
-- their members. One entry per object, sorted; no OIDs.
SELECT $catalog$
WITH ext AS (SELECT * FROM pg_extension WHERE extname = 'snowflake'),
members AS (
  SELECT d.classid, d.objid, d.objsubid FROM pg_depend d, ext
  WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'),
families AS (
  SELECT objid AS oid FROM members WHERE classid = 'pg_opfamily'::regclass
  UNION SELECT c.opcfamily FROM members m JOIN pg_opclass c ON m.classid = 'pg_opclass'::regclass AND c.oid = m.objid),
entries(entry) AS (
  SELECT format('extension %s %s schema %s relocatable %s config %s', extname, extversion,
                extnamespace::regnamespace, extrelocatable, extconfig::regclass[]) FROM ext
  UNION ALL
  SELECT 'member ' || pg_describe_object(classid, objid, objsubid) FROM members
  UNION ALL
  SELECT 'comment on ' || pg_describe_object(m.classid, m.objid, m.objsubid) || ': ' || c.description
  FROM members m JOIN pg_description c ON c.classoid = m.classid AND c.objoid = m.objid AND c.objsubid = m.objsubid
  UNION ALL
  SELECT format('function %s kind %s acl %s cost %s rows %s leakproof %s support %s%s', p.oid::regprocedure,
                p.prokind, p.proacl, p.procost, p.prorows, p.proleakproof, p.prosupport,
                CASE WHEN p.prokind IN ('f', 'p') THEN E'\n' || pg_get_functiondef(p.oid) END)
  FROM members m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
  UNION ALL
  SELECT format('aggregate %s transition %s final %s combine %s state %s initial %s', a.aggfnoid::regprocedure,
                a.aggtransfn, a.aggfinalfn, a.aggcombinefn, a.aggtranstype::regtype, a.agginitval)
  FROM members m JOIN pg_aggregate a ON m.classid = 'pg_proc'::regclass AND a.aggfnoid = m.objid
  UNION ALL
  SELECT format('operator %s result %s function %s commutator %s negator %s restrict %s join %s merges %s hashes %s',
                o.oid::regoperator, o.oprresult::regtype, o.oprcode, o.oprcom::regoperator, o.oprnegate::regoperator,
                o.oprrest, o.oprjoin, o.oprcanmerge, o.oprcanhash)
  FROM members m JOIN pg_operator o ON m.classid = 'pg_operator'::regclass AND o.oid = m.objid
  UNION ALL
  SELECT format('type %s kind %s length %s by value %s category %s in %s out %s receive %s send %s modin %s '
                'modout %s analyze %s align %s storage %s base %s acl %s',
                t.oid::regtype, t.typtype, t.typlen, t.typbyval, t.typcategory, t.typinput, t.typoutput,
                t.typreceive, t.typsend, t.typmodin, t.typmodout, t.typanalyze, t.typalign, t.typstorage,
                t.typbasetype::regtype, t.typacl)
  FROM members m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
  UNION ALL
  SELECT format('cast %s -> %s function %s context %s method %s', c.castsource::regtype, c.casttarget::regtype,
                c.castfunc::regprocedure, c.castcontext, c.castmethod)
  FROM members m JOIN pg_cast c ON m.classid = 'pg_cast'::regclass AND c.oid = m.objid
  UNION ALL
  SELECT format('operator class %s using %s for %s family %s default %s storage %s', c.opcname, a.amname,
                c.opcintype::regtype, f.opfname, c.opcdefault, c.opckeytype::regtype)
  FROM members m JOIN pg_opclass c ON m.classid = 'pg_opclass'::regclass AND c.oid = m.objid
  JOIN pg_am a ON a.oid = c.opcmethod JOIN pg_opfamily f ON f.oid = c.opcfamily
  UNION ALL
  SELECT format('family %s using %s: strategy %s (%s, %s) %s purpose %s order family %s', f.opfname, a.amname,
                o.amopstrategy, o.amoplefttype::regtype, o.amoprighttype::regtype, o.amopopr::regoperator,
                o.amoppurpose, (SELECT opfname FROM pg_opfamily WHERE oid = o.amopsortfamily))
  FROM families ff JOIN pg_opfamily f ON f.oid = ff.oid JOIN pg_am a ON a.oid = f.opfmethod
  JOIN pg_amop o ON o.amopfamily = f.oid
  UNION ALL
  SELECT format('family %s using %s: support %s (%s, %s) %s', f.opfname, a.amname, p.amprocnum,
                p.amproclefttype::regtype, p.amprocrighttype::regtype, p.amproc::regprocedure)
  FROM families ff JOIN pg_opfamily f ON f.oid = ff.oid JOIN pg_am a ON a.oid = f.opfmethod
  JOIN pg_amproc p ON p.amprocfamily = f.oid
  UNION ALL
  SELECT format('initial privileges of %s (%s): %s', pg_describe_object(i.classoid, i.objoid, i.objsubid), i.privtype,
                i.initprivs)
  FROM members m JOIN pg_init_privs i ON i.classoid = m.classid AND i.objoid = m.objid
  UNION ALL
  SELECT format('column %s.%s %s not null %s', m.objid::regclass, a.attname, format_type(a.atttypid, a.atttypmod),
                a.attnotnull)
  FROM members m JOIN pg_attribute a ON m.classid = 'pg_class'::regclass AND a.attrelid = m.objid
  WHERE a.attnum > 0 AND NOT a.attisdropped)
SELECT count(*) AS entries, md5(string_agg(entry, chr(30) ORDER BY entry)) AS md5,
       string_agg(entry, chr(30) ORDER BY entry) AS catalog
FROM entries
$catalog$ AS catalog_query \gset
:catalog_query \gset updated_

-- The fresh catalog comes from the full install script of the default version
-- (built from src/sql/), not from the upgrade chain above.
CREATE DATABASE upgrade_fresh;
\c upgrade_fresh
CREATE EXTENSION snowflake;
SELECT count(*) = 1 AS one_install_script_run FROM pg_extension WHERE extname = 'snowflake';
:catalog_query \gset fresh_
-- The comparison can fail: one changed comment, one dropped member, one changed label, and
-- initial privileges that differ while the privileges themselves do not.
BEGIN;
COMMENT ON FUNCTION snowflake_to_hex(bigint) IS 'changed';
:catalog_query \gset commented_
ROLLBACK;
BEGIN;
ALTER EXTENSION snowflake DROP FUNCTION snowflake_from_hex(text);
:catalog_query \gset dropped_
ROLLBACK;
BEGIN;
ALTER FUNCTION snowflake_to_hex(bigint) STABLE;
:catalog_query \gset relabelled_
ROLLBACK;
BEGIN;
UPDATE pg_init_privs SET initprivs = acldefault('f', (SELECT proowner FROM pg_proc WHERE oid = objoid))
WHERE classoid = 'pg_proc'::regclass AND objoid = 'snowflake_stats()'::regprocedure;
:catalog_query \gset reinitialised_
ROLLBACK;
SELECT :'commented_md5' <> :'fresh_md5' AS changed_comment_detected,
       :'dropped_md5' <> :'fresh_md5' AS dropped_member_detected,
       :'relabelled_md5' <> :'fresh_md5' AS changed_label_detected,
       :'reinitialised_md5' <> :'fresh_md5' AS changed_initial_privileges_detected;
\c contrib_regression
DROP DATABASE upgrade_fresh;

-- (The entry count itself varies with the server version: rows that PostgreSQL adds for a type.)
SELECT :'updated_md5' = :'fresh_md5' AS catalogs_match, :updated_entries = :fresh_entries AS same_entry_count,
       :updated_entries > 0 AS compared_something;
-- What differs, if anything, entry by entry (a function's definition on one line).
SELECT 'only when updated' AS side, regexp_replace(entry, '\s+', ' ', 'g') AS entry
FROM (SELECT unnest(string_to_array(:'updated_catalog', chr(30)))
      EXCEPT SELECT unnest(string_to_array(:'fresh_catalog', chr(30)))) AS d(entry)
UNION ALL
SELECT 'only when fresh', regexp_replace(entry, '\s+', ' ', 'g')
FROM (SELECT unnest(string_to_array(:'fresh_catalog', chr(30)))
      EXCEPT SELECT unnest(string_to_array(:'updated_catalog', chr(30)))) AS d(entry)
ORDER BY 1, 2;
