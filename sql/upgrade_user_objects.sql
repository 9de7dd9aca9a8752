-- An upgrade keeps the user's objects. The released 0.1.0 -> 0.2.0 step
-- recreated snowflake_stats() and so refuses while a view on it exists (shown
-- first); so does 0.4.0 -> 0.5.0 with a view on snowflake_cluster_nodes(),
-- which gains a column: it names the views, changes nothing, and its HINT's
-- steps (keep the view's definition and grants, drop it, update, create it
-- again) are followed as written. A view on snowflake_stats(), whose columns
-- stay, and the custom grants on both functions survive the update.
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
ALTER EXTENSION snowflake UPDATE TO '0.4.0';
CREATE VIEW cluster AS SELECT server, node, problem FROM snowflake_cluster_nodes();
GRANT SELECT ON cluster TO snowflake_dashboard;
GRANT EXECUTE ON FUNCTION snowflake_cluster_nodes() TO snowflake_dashboard;
\set VERBOSITY default
\set SHOW_CONTEXT never
ALTER EXTENSION snowflake UPDATE;
\set VERBOSITY terse
\set SHOW_CONTEXT errors
SELECT extversion AS unchanged FROM pg_extension WHERE extname = 'snowflake';
SELECT pg_get_viewdef('cluster'::regclass) AS cluster_definition \gset
DROP VIEW cluster;
ALTER EXTENSION snowflake UPDATE;
CREATE VIEW cluster AS :cluster_definition
GRANT SELECT ON cluster TO snowflake_dashboard;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'snowflake') AS at_default_version
FROM pg_extension WHERE extname = 'snowflake';
SELECT has_function_privilege('snowflake_dashboard', 'snowflake_stats()', 'EXECUTE') AS dashboard_may_execute,
       has_function_privilege('public', 'snowflake_stats()', 'EXECUTE') AS public_may_execute,
       has_function_privilege('snowflake_dashboard', 'snowflake_cluster_nodes()', 'EXECUTE') AS dashboard_may_list;
SET ROLE snowflake_dashboard;
SELECT node, state FROM generator;
RESET ROLE;
SELECT count(*) AS servers, count(problem) AS problems FROM cluster;
INSERT INTO typed DEFAULT VALUES;
SELECT count(*) AS recent FROM recent;

\c contrib_regression
DROP DATABASE snowflake_user_objects;
DROP ROLE snowflake_dashboard;
