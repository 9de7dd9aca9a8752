-- pg_partman (checked with Debian's 4.7.2 on PG 15, 5.2 on PG 17 and 5.5 on PG 18) partitioning a snowflake key by ID,
-- one partition a day: the interval is one day in IDs, 86,400,000 ms shifted past node and sequence.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';
CREATE SCHEMA partman;
CREATE EXTENSION pg_partman SCHEMA partman;
SELECT 86400000::bigint << 22 AS one_day_of_ids;
CREATE TABLE events (id bigint NOT NULL DEFAULT snowflake_nextval(), body text) PARTITION BY RANGE (id);
-- pg_partman 5 (Debian trixie and later) dropped the 'native' type for 'range' and moved p_interval
-- ahead of p_type, so the call names its arguments and picks the type by the installed version.
SELECT partman.create_parent(p_parent_table := 'public.events', p_control := 'id',
                             p_interval := (86400000::bigint << 22)::text,
                             p_type := (SELECT CASE WHEN split_part(extversion, '.', 1)::int >= 5 THEN 'range'
                                                    ELSE 'native' END
                                        FROM pg_extension WHERE extname = 'pg_partman'),
                             p_start_partition := snowflake_min_id('2024-03-01')::text);
-- Partitions are multiples of the interval counted from ID 0, so each day starts at the epoch's time of
-- day (01:42:54.657 UTC for Twitter's epoch), not at midnight.
SELECT c.relname, snowflake_timestamp(substring(pg_get_expr(c.relpartbound, c.oid) FROM '\(''(\d+)')::bigint) AS starts
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'events'::regclass ORDER BY 1;
-- Rows go to the day of their time; a time-range query reads one partition.
INSERT INTO events SELECT snowflake_backfill_id(ts), 'backfilled'
FROM generate_series('2024-03-01 06:00'::timestamptz, '2024-03-03 06:00', interval '1 hour') AS ts;
SELECT tableoid::regclass AS partition, count(*), min(snowflake_timestamp(id)), max(snowflake_timestamp(id))
FROM events GROUP BY 1 ORDER BY 1;
EXPLAIN (COSTS OFF) SELECT count(*) FROM events WHERE id <@ tstzrange('2024-03-02 03:00', '2024-03-02 04:00');
DROP TABLE events;
DROP EXTENSION pg_partman;
SET client_min_messages = warning; -- pg_partman 4 leaves a template table behind, 5 does not
DROP SCHEMA partman CASCADE;
RESET client_min_messages;
