-- Every server's node and where it came from, once each has read its group (docs/citus.md quotes it).
SELECT server, role, node, node_source, problem FROM snowflake_cluster_nodes();
