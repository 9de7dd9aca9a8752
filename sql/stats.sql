-- snowflake_stats(): this server's generator at a glance, for pg_monitor.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';
SELECT node, epoch, layout, ids_per_second, runs_out_at, state, clock_offset_ms FROM snowflake_stats();
-- The suites before this one issued well over 300,000 IDs, all covered by a durable reservation.
SELECT last_id IS NOT NULL AS issued,
       ids_issued >= 300000 AS counted,
       reservations >= 1 AS reserved,
       reserved_until >= last_id_time AS reservation_covers_last_id,
       last_id_time = snowflake_timestamp(last_id) AS last_id_time_matches
FROM snowflake_stats();
SELECT ids_issued AS before FROM snowflake_stats() \gset
SELECT count(snowflake_nextval()) FROM generate_series(1, 10);
SELECT ids_issued - :before AS issued_since FROM snowflake_stats();

-- snowflake_reservation(): the reservation covers the last ID and reaches at most one lead past
-- the clock, with a lead from 200 ms to 10 s, sized from the measured write latency.
SELECT r.reserved_until >= s.last_id_time AS covers_last_id,
       r.reserved_until <= clock_timestamp() + r.lead_ms * interval '1 ms' AS within_one_lead,
       r.lead_ms BETWEEN 200 AND 10000 AS lead_in_range,
       r.write_latency_ms >= 0 AS latency_measured,
       r.renewals + r.caller_writes >= 1 AS written,
       r.caller_waits >= 0 AS waits_counted
FROM snowflake_reservation() r, snowflake_stats() s;

-- snowflake_state(): the same state, since when (the server's start: its shared memory is made just
-- before pg_postmaster_start_time()), and nothing to explain or wait for while it is ok.
SELECT st.state, st.state = s.state AS same_as_stats,
       st.since BETWEEN pg_postmaster_start_time() - interval '10 s' AND clock_timestamp() AS since_this_run,
       st.detail IS NULL AS no_detail, st.resumes_at IS NULL AS nothing_to_resume
FROM snowflake_state() st, snowflake_stats() s;

-- Readable by pg_monitor members, not by PUBLIC.
CREATE ROLE snowflake_watcher;
SET ROLE snowflake_watcher;
SELECT state FROM snowflake_stats();
\echo :SQLSTATE
SELECT lead_ms > 0 FROM snowflake_reservation();
\echo :SQLSTATE
SELECT state FROM snowflake_state();
\echo :SQLSTATE
RESET ROLE;
GRANT pg_monitor TO snowflake_watcher;
SET ROLE snowflake_watcher;
SELECT state FROM snowflake_stats();
SELECT lead_ms > 0 AS readable FROM snowflake_reservation();
SELECT state FROM snowflake_state();
RESET ROLE;
DROP ROLE snowflake_watcher;

-- snowflake_node_origins() reads each row's replication origin, which needs commit timestamps.
SHOW track_commit_timestamp;
CREATE TABLE origins_probe (id bigint PRIMARY KEY DEFAULT snowflake_nextval());
SELECT * FROM snowflake_node_origins('origins_probe');
\echo :SQLSTATE
DROP TABLE origins_probe;

-- snowflake_node_status(): the node and where it came from; the node check looks in the database
-- snowflake.database names, postgres, which has no extension here (or had none when it last looked).
SELECT n.node = s.node AS same_node_as_stats, n.node_source,
       n.node_check IN ('no extension', 'starting', 'ok') AS node_check_known,
       n.node_conflict IS NULL AS no_conflict,
       n.checked_at IS NULL OR n.checked_at <= clock_timestamp() AS checked_in_the_past
FROM snowflake_node_status() n, snowflake_stats() s;
