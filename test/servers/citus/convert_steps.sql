-- The steps snowflake_convert_column()'s HINT gives for the distribution column of legacy.sql's table
-- (the suite checks the HINT against this file; docs/citus.md quotes it).
SELECT undistribute_table('public.legacy');
SELECT snowflake_convert_column('public.legacy', 'id');
SELECT create_distributed_table('public.legacy', 'id');
