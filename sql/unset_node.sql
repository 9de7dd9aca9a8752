-- A preloaded server whose snowflake.node was never set, with
-- snowflake.epoch = 1577836800000 (2020-01-01 00:00:00 UTC).
CREATE EXTENSION snowflake;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';
SHOW snowflake.node;

-- Generation refuses, with a hint saying what to put in postgresql.conf.
SELECT snowflake_nextval();
\echo :SQLSTATE
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), item text);
INSERT INTO orders (item) VALUES ('refused');
\echo :SQLSTATE
SELECT count(*) AS orders FROM orders;

-- Decoding still works, counting from this server's epoch.
SELECT snowflake_timestamp(0);
SELECT * FROM snowflake_parse(910499571847892992);
DROP TABLE orders;

-- snowflake_stats() says why no ID can be issued, so one alert on state <> 'ok' catches it.
SELECT node, state FROM snowflake_stats();
SELECT state, detail FROM snowflake_state();

-- The cluster-wide check names it too (this server alone, without Citus).
SELECT role, node, state, problem FROM snowflake_cluster_nodes();
