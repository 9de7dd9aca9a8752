-- Who can see snowflake.mask_keys: a plain role can mask but never read the
-- key (SHOW, current_setting, pg_settings, pg_file_settings,
-- postgresql.auto.conf, pg_stat_statements); a pg_read_all_settings member
-- sees the key IDs only; no catalog that every role reads may store it.
CREATE EXTENSION pg_stat_statements;
CREATE ROLE regress_app LOGIN;
CREATE ROLE regress_watcher LOGIN IN ROLE pg_read_all_settings;
SET snowflake.mask_keys = 'K:2b7e151628aed2a6abf7158809cf4f3c';
SHOW snowflake.mask_keys;
SELECT snowflake_mask_text(1) AS as_superuser \gset

-- Each refusal's SQLSTATE (the wording differs between majors), by public_ids' sqlstate_of().
SET ROLE regress_app;
SELECT statement, sqlstate_of(statement) AS sqlstate FROM unnest(ARRAY[
    'SHOW snowflake.mask_keys', 'SELECT current_setting(''snowflake.mask_keys'')',
    'SELECT count(*) FROM pg_file_settings', 'SELECT pg_read_file(''postgresql.auto.conf'')',
    'SET snowflake.mask_keys = ''K:000102030405060708090a0b0c0d0e0f''']) statement;
SELECT count(*) AS rows_in_pg_settings FROM pg_settings WHERE name = 'snowflake.mask_keys';
SELECT count(*) FILTER (WHERE query LIKE '%2b7e1516%') AS statements_showing_the_key,
       count(*) FILTER (WHERE query = '<insufficient privilege>') > 0 AS others_hidden
FROM pg_stat_statements;
-- It may use the key all the same.
SELECT snowflake_mask_text(1) = :'as_superuser' AS app_masks_alike;
RESET ROLE;

SET ROLE regress_watcher;
SHOW snowflake.mask_keys;
SELECT current_setting('snowflake.mask_keys');
SELECT count(*) AS rows_in_pg_settings FROM pg_settings WHERE name = 'snowflake.mask_keys';
RESET ROLE;

-- The superuser's own SET is in pg_stat_statements, the key in its text up to PostgreSQL 17 (18
-- stores $1 for the value): what the plain role was kept from.
SELECT count(*) > 0 AS superuser_sees_its_set FROM pg_stat_statements WHERE query LIKE 'SET snowflake.mask_keys = %';

-- Catalogs every role can read never hold it.
ALTER ROLE regress_app SET snowflake.mask_keys = 'K:2b7e151628aed2a6abf7158809cf4f3c';
ALTER DATABASE contrib_regression SET snowflake.mask_keys = 'K:2b7e151628aed2a6abf7158809cf4f3c';
ALTER ROLE ALL SET snowflake.mask_keys = 'K:2b7e151628aed2a6abf7158809cf4f3c';
CREATE FUNCTION regress_keyed() RETURNS int LANGUAGE sql SET snowflake.mask_keys = 'K:2b7e151628aed2a6abf7158809cf4f3c'
AS 'SELECT 1';
SELECT count(*) AS stored_in_catalogs FROM pg_db_role_setting WHERE array_to_string(setconfig, ',') LIKE '%mask_keys%';
-- ALTER SYSTEM (postgresql.auto.conf, readable by superusers only) takes it.
ALTER SYSTEM SET snowflake.mask_keys = 'K:2b7e151628aed2a6abf7158809cf4f3c';
ALTER SYSTEM RESET snowflake.mask_keys;

RESET snowflake.mask_keys;
DROP ROLE regress_app, regress_watcher;
DROP EXTENSION pg_stat_statements;
DROP FUNCTION sqlstate_of(text);
