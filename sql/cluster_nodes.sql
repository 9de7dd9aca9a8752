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

-- A role granted EXECUTE on it and on snowflake_stats() alone, without pg_monitor (and so without
-- pg_read_all_settings, which reading unix_socket_directories takes): it runs, naming this server by
-- its address, else [local] (this test connects through a socket).
CREATE ROLE snowflake_cluster_granted;
GRANT EXECUTE ON FUNCTION snowflake_cluster_nodes(), snowflake_stats() TO snowflake_cluster_granted;
SET ROLE snowflake_cluster_granted;
SELECT role, node, state, problem,
       server = coalesce(host(inet_server_addr()), '[local]') || ':' || current_setting('port') AS names_this_server
FROM snowflake_cluster_nodes();
RESET ROLE;
REVOKE EXECUTE ON FUNCTION snowflake_cluster_nodes(), snowflake_stats() FROM snowflake_cluster_granted;
DROP ROLE snowflake_cluster_granted;
