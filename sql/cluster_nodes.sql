-- snowflake_cluster_nodes() without Citus: this server alone, as 'standalone', named by its
-- address (or socket directory) and port, with no problem.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';
SELECT role, node, state, layout, epoch, problem FROM snowflake_cluster_nodes();
SELECT server ~ (':' || current_setting('port') || '$') AS names_this_port,
       server = (SELECT coalesce(host(inet_server_addr()), split_part(current_setting('unix_socket_directories'), ',', 1)))
                || ':' || current_setting('port') AS names_this_server
FROM snowflake_cluster_nodes();

-- Readable by pg_monitor members, not by PUBLIC (it reads snowflake_stats() on every server).
CREATE ROLE snowflake_cluster_watcher;
SET ROLE snowflake_cluster_watcher;
SELECT count(*) FROM snowflake_cluster_nodes();
\echo :SQLSTATE
RESET ROLE;
GRANT pg_monitor TO snowflake_cluster_watcher;
SET ROLE snowflake_cluster_watcher;
SELECT count(*) AS servers FROM snowflake_cluster_nodes();
RESET ROLE;
DROP ROLE snowflake_cluster_watcher;
