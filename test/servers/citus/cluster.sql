-- The cluster, on the coordinator once every server has run CREATE EXTENSION citus
-- (docs/citus.md quotes it). The second worker joins after snowflake was created.
SELECT citus_set_coordinator_host('127.0.0.1', 26460);
SELECT citus_add_node('127.0.0.1', 26461);
CREATE EXTENSION snowflake;
SELECT citus_add_node('127.0.0.1', 26462);
