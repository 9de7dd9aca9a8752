-- Decoding: the layout (bit 63 = 0 | 41 bits ms | 10 bits node | 12 bits sequence)
-- on the default epoch, 2010-11-04 01:42:54.657 UTC.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';

-- The worked example: 2017-09-20 13:43:08.849 UTC, datacenter 17, worker 25, sequence 0.
SELECT snowflake_timestamp(910499571847892992);
SELECT * FROM snowflake_parse(910499571847892992);
SELECT node = 17 * 32 + 25 AS datacenter_17_worker_25 FROM snowflake_parse(910499571847892992);

-- Round trip: the parts put back together give the ID again.
CREATE FUNCTION pg_temp.recompose(ts timestamptz, node int, seq int) RETURNS bigint LANGUAGE sql AS $$
  SELECT (((extract(epoch FROM ts) * 1000)::bigint - 1288834974657) << 22) | (node::bigint << 12) | seq
$$;
SELECT pg_temp.recompose(ts, node, seq) = 910499571847892992 AS round_trips
FROM snowflake_parse(910499571847892992);
-- 10,000 scattered IDs (from hashes) round-trip too.
SELECT count(*) AS ids, count(*) FILTER (WHERE pg_temp.recompose(p.ts, p.node, p.seq) = id) AS round_trips
FROM (SELECT ((hashint8(g)::bigint << 32) | (hashint8(-g)::bigint & 4294967295)) & 9223372036854775807 AS id
      FROM generate_series(1, 10000) AS g) AS ids,
     LATERAL snowflake_parse(id) AS p;

-- The field edges.
SELECT id, p.* FROM unnest(ARRAY[0, 1, 4095, 4096, 4194303, 4194304, 9223372036854775807]) AS id,
     LATERAL snowflake_parse(id) AS p;
SELECT snowflake_timestamp(9223372036854775807) = '2010-11-04 01:42:54.657+00'::timestamptz
       + (2199023255551 * interval '1 millisecond') AS last_ms_is_epoch_plus_2_41_minus_1;

-- NULL in, NULL out.
SELECT snowflake_timestamp(NULL) IS NULL AS timestamp_null, snowflake_parse(NULL) IS NULL AS parse_null;
SELECT * FROM snowflake_parse(NULL);

-- IMMUTABLE: usable in expression indexes and partition keys.
CREATE TABLE events (id bigint PRIMARY KEY, body text);
CREATE INDEX events_time ON events (snowflake_timestamp(id));
CREATE TABLE events_by_time (id bigint NOT NULL) PARTITION BY RANGE (snowflake_timestamp(id));
CREATE TABLE events_2017 PARTITION OF events_by_time FOR VALUES FROM ('2017-01-01+00') TO ('2018-01-01+00');
INSERT INTO events_by_time VALUES (910499571847892992);
SELECT tableoid::regclass AS partition, id FROM events_by_time;
DROP TABLE events, events_by_time;
