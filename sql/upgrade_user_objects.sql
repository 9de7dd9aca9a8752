-- An upgrade keeps the user's objects. The released 0.1.0 -> 0.2.0 step
-- recreated snowflake_stats() and so refuses while a view on it exists (shown
-- first); so does 0.4.0 -> 0.5.0, whose snowflake_stats() gains columns: it
-- names the views, changes nothing, and its HINT's steps (keep the view's
-- definition and grants, drop it, update, create it again) are followed as
-- written. A custom grant on snowflake_stats() survives the update.
CREATE DATABASE snowflake_user_objects;
\c snowflake_user_objects
CREATE ROLE snowflake_dashboard;
CREATE EXTENSION snowflake VERSION '0.1.0';
CREATE VIEW generator AS SELECT node, state, ids_issued FROM snowflake_stats();
\set VERBOSITY sqlstate
ALTER EXTENSION snowflake UPDATE TO '0.2.0';
\set VERBOSITY terse
DROP VIEW generator;
ALTER EXTENSION snowflake UPDATE TO '0.2.0';

CREATE VIEW generator AS SELECT node, state, ids_issued FROM snowflake_stats();
GRANT EXECUTE ON FUNCTION snowflake_stats() TO snowflake_dashboard;
GRANT SELECT ON generator TO snowflake_dashboard;
CREATE TABLE typed (id snowflake PRIMARY KEY DEFAULT snowflake_nextval());
CREATE VIEW recent AS SELECT id FROM typed WHERE id::bigint <@ tstzrange(now() - interval '1 day', NULL);
\set VERBOSITY default
\set SHOW_CONTEXT never
ALTER EXTENSION snowflake UPDATE;
\set VERBOSITY terse
\set SHOW_CONTEXT errors
SELECT extversion AS unchanged FROM pg_extension WHERE extname = 'snowflake';
SELECT pg_get_viewdef('generator'::regclass) AS generator_definition \gset
DROP VIEW generator;
ALTER EXTENSION snowflake UPDATE;
CREATE VIEW generator AS :generator_definition
GRANT SELECT ON generator TO snowflake_dashboard;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'snowflake') AS at_default_version
FROM pg_extension WHERE extname = 'snowflake';
SELECT has_function_privilege('snowflake_dashboard', 'snowflake_stats()', 'EXECUTE') AS dashboard_may_execute,
       has_function_privilege('public', 'snowflake_stats()', 'EXECUTE') AS public_may_execute;
SET ROLE snowflake_dashboard;
SELECT node, state FROM generator;
RESET ROLE;
INSERT INTO typed DEFAULT VALUES;
SELECT count(*) AS recent FROM recent;

\c contrib_regression
DROP DATABASE snowflake_user_objects;
DROP ROLE snowflake_dashboard;
