-- Querying by time: ID bounds from times, ID ranges from time ranges, the
-- index-using filter, BRIN, partitioning by ID, and backfilled IDs.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';

-- Bounds of one millisecond: node 0 / sequence 0 up to node 1023 / sequence 4095.
SELECT (snowflake_parse(snowflake_min_id('2017-09-20 13:43:08.849+00'))).*;
SELECT (snowflake_parse(snowflake_max_id('2017-09-20 13:43:08.849+00'))).*;
SELECT snowflake_min_id('2017-09-20 13:43:08.849+00') <= 910499571847892992
   AND 910499571847892992 <= snowflake_max_id('2017-09-20 13:43:08.849+00') AS worked_example_inside;
-- Sub-millisecond times round inward: min to the next millisecond, max to the one containing it.
SELECT snowflake_timestamp(snowflake_min_id('2017-09-20 13:43:08.8495+00')) AS min_of_8495,
       snowflake_timestamp(snowflake_max_id('2017-09-20 13:43:08.8495+00')) AS max_of_8495;
-- The edges of the layout.
SELECT snowflake_min_id('2010-11-04 01:42:54.657+00') AS first_id_ever,
       snowflake_max_id('2080-07-10 17:30:30.208999+00') AS last_id_ever;

-- Every ID issued at time t lies between snowflake_min_id(t) and snowflake_max_id(t).
CREATE TEMP TABLE issued AS SELECT snowflake_nextval() AS id FROM generate_series(1, 20000);
SELECT count(*) AS ids,
       count(*) FILTER (WHERE snowflake_min_id(snowflake_timestamp(id)) <= id
                          AND id <= snowflake_max_id(snowflake_timestamp(id))) AS within_bounds
FROM issued;

-- Ranges: every combination of inclusive and exclusive ends, sub-millisecond ends, infinite and empty ranges.
SELECT r, snowflake_id_range(r) = int8range(snowflake_range_first_id(r), snowflake_range_last_id(r), '[]')
          OR isempty(snowflake_id_range(r)) AS consistent,
       lower(snowflake_id_range(r)) = snowflake_min_id(lower(r)) AS lower_is_min_id -- not when the end is exclusive
FROM unnest(ARRAY[tstzrange('2024-01-01', '2024-01-02', '[)'), tstzrange('2024-01-01', '2024-01-02', '(]'),
                  tstzrange('2024-01-01', '2024-01-02', '[]'), tstzrange('2024-01-01', '2024-01-02', '()'),
                  tstzrange('2024-01-01 00:00:00.0005', '2024-01-01 00:00:00.0025')]) AS r;
SELECT snowflake_id_range('[2024-01-01 00:00:00.001, 2024-01-01 00:00:00.002)') =
       int8range(snowflake_min_id('2024-01-01 00:00:00.001'), snowflake_min_id('2024-01-01 00:00:00.002'))
       AS one_millisecond;
SELECT snowflake_id_range('[2024-01-01 00:00:00.0002, 2024-01-01 00:00:00.0007]') AS no_whole_millisecond,
       snowflake_id_range('empty') AS empty,
       snowflake_id_range('(,)') AS unbounded,
       snowflake_id_range('[-infinity, infinity]') AS infinities,
       snowflake_id_range('[infinity,]') AS from_infinity;
SELECT lower_inf(snowflake_id_range('(, 2024-01-01)')) AS lower_unbounded,
       upper(snowflake_id_range('(, 2024-01-01)')) = snowflake_min_id('2024-01-01') AS upper_is_min_id,
       upper_inf(snowflake_id_range('[2024-01-01,)')) AS upper_unbounded;

-- snowflake_between(id, r) and id <@ r mean exactly "snowflake_timestamp(id) <@ r", whether the planner
-- rewrites them (a plain column) or the function itself runs (a volatile argument is left alone).
CREATE TEMP TABLE grid AS
SELECT snowflake_min_id('2024-01-01') + ms * 4194304 + seq AS id
FROM generate_series(-3, 3) AS ms, unnest(ARRAY[0, 1, 4194303]) AS seq;
CREATE TEMP TABLE ranges AS
SELECT tstzrange('2024-01-01'::timestamptz + lo * interval '1 microsecond',
                 '2024-01-01'::timestamptz + hi * interval '1 microsecond', b) AS r
FROM unnest(ARRAY[-2000, -1500, -1000, 0, 500, 1000]) AS lo, unnest(ARRAY[-1000, 0, 999, 1000, 2500]) AS hi,
     unnest(ARRAY['[)', '(]', '[]', '()']) AS b
WHERE lo <= hi;
SELECT count(*) AS cases,
       count(*) FILTER (WHERE snowflake_between(id, r) = (snowflake_timestamp(id) <@ r)) AS rewritten_agree,
       count(*) FILTER (WHERE (id <@ r) = (snowflake_timestamp(id) <@ r)) AS operator_agrees,
       count(*) FILTER (WHERE snowflake_between(id + (random() * 0)::bigint, r) = (snowflake_timestamp(id) <@ r))
         AS function_agrees,
       count(*) FILTER (WHERE (id <@ snowflake_id_range(r)) = (snowflake_timestamp(id) <@ r)) AS id_range_agrees
FROM grid, ranges;

-- Times the layout cannot hold, and infinities where one ID is asked for, are errors.
SELECT snowflake_min_id('2010-11-04 01:42:54.656+00');
\echo :SQLSTATE
SELECT snowflake_max_id('2080-07-10 17:30:30.209+00');
\echo :SQLSTATE
SELECT snowflake_min_id('2080-07-10 17:30:30.2085+00');
\echo :SQLSTATE
SELECT snowflake_min_id('infinity');
\echo :SQLSTATE
SELECT snowflake_min_id('294276-12-31 23:59:59.999999+00'); -- the last timestamptz: after the end, no overflow
\echo :SQLSTATE
SELECT snowflake_max_id('-infinity');
\echo :SQLSTATE

-- A range is a filter: its ends are clamped to the layout's span (2010-11-04 to 2080-07-10 here),
-- with the same rewrite into an ID range on the index.
SELECT snowflake_id_range('[2000-01-01, 2024-01-01)') = snowflake_id_range('(, 2024-01-01)') AS lower_clamped,
       snowflake_id_range('[2024-01-01, 2100-01-01)') = snowflake_id_range('[2024-01-01,)') AS upper_clamped,
       snowflake_id_range('[2000-01-01, 2100-01-01)') = '(,)'::int8range AS both_clamped,
       isempty(snowflake_id_range('[2000-01-01, 2005-01-01)')) AS all_before_epoch_is_empty,
       isempty(snowflake_id_range('[2090-01-01, 2100-01-01)')) AS all_after_the_end_is_empty,
       isempty(snowflake_id_range('[2090-01-01,)')) AND isempty(snowflake_id_range('(, 2005-01-01]'))
         AS one_end_beyond_the_far_side_is_empty;
SELECT count(*) = (SELECT count(*) FROM grid) AS whole_grid,
       count(*) FILTER (WHERE id <@ tstzrange('2024-01-01', '2090-01-01'))
         = count(*) FILTER (WHERE snowflake_timestamp(id) >= '2024-01-01') AS upper_past_the_end,
       count(*) FILTER (WHERE snowflake_between(id, '[2090-01-01, 2100-01-01)')) AS after_the_end
FROM grid WHERE id <@ '[2000-01-01, 2100-01-01)'::tstzrange;
CREATE TEMP TABLE clamped AS SELECT id FROM grid;
ALTER TABLE clamped ADD PRIMARY KEY (id);
ANALYZE clamped;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM clamped WHERE id <@ '[2000-01-01, 2024-01-01)'::tstzrange;
EXPLAIN (COSTS OFF) SELECT id FROM clamped WHERE snowflake_between(id, tstzrange('2024-01-01', '2100-01-01'));
RESET enable_seqscan;
DROP TABLE clamped;
SELECT snowflake_min_id(NULL) IS NULL AND snowflake_id_range(NULL) IS NULL AND snowflake_between(1, NULL) IS NULL
       AS nulls_give_null;

-- A table of 200,000 readings over 20 days (backfilled IDs), with only its primary key.
CREATE TABLE readings (id bigint PRIMARY KEY, value int);
INSERT INTO readings
SELECT snowflake_backfill_id(ts), 1 FROM generate_series('2024-03-01'::timestamptz, '2024-03-20 23:59:59',
                                                         interval '8640 ms') AS ts;
ANALYZE readings;
-- One hour, three ways to ask: the operator, the function, and the bound functions.
EXPLAIN (COSTS OFF) SELECT count(*) FROM readings WHERE id <@ tstzrange('2024-03-10 12:00', '2024-03-10 13:00');
EXPLAIN (COSTS OFF)
SELECT count(*) FROM readings WHERE snowflake_between(id, '[2024-03-10 12:00, 2024-03-10 13:00)');
EXPLAIN (COSTS OFF)
SELECT count(*) FROM readings
WHERE id >= snowflake_min_id('2024-03-10 12:00') AND id < snowflake_min_id('2024-03-10 13:00');
SELECT count(*) AS operator,
       (SELECT count(*) FROM readings WHERE snowflake_timestamp(id) >= '2024-03-10 12:00'
                                        AND snowflake_timestamp(id) < '2024-03-10 13:00') AS by_decoding
FROM readings WHERE id <@ tstzrange('2024-03-10 12:00', '2024-03-10 13:00');
-- A parameter (a generic plan) still uses the index, with the bounds computed when the plan runs.
PREPARE hour_of(tstzrange) AS SELECT count(*) FROM readings WHERE id <@ $1;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE hour_of('[2024-03-10 12:00, 2024-03-10 13:00)');
EXECUTE hour_of('[2024-03-10 12:00, 2024-03-10 13:00)');
RESET plan_cache_mode;
DEALLOCATE hour_of;

-- A BRIN index is used the same way.
CREATE TABLE readings_brin AS SELECT * FROM readings ORDER BY id;
CREATE INDEX readings_brin_id ON readings_brin USING brin (id);
ANALYZE readings_brin;
EXPLAIN (COSTS OFF) SELECT count(*) FROM readings_brin WHERE id <@ tstzrange('2024-03-10 12:00', '2024-03-10 13:00');
SELECT count(*) AS brin_hour FROM readings_brin WHERE id <@ tstzrange('2024-03-10 12:00', '2024-03-10 13:00');
DROP TABLE readings_brin;

-- Partitioning by ID, one partition a month, bounds from snowflake_min_id(): rows go to the month of their
-- time, and a time-range query reads one partition.
CREATE TABLE events (id bigint NOT NULL, body text) PARTITION BY RANGE (id);
CREATE TABLE events_2024_02 PARTITION OF events
  FOR VALUES FROM (snowflake_min_id('2024-02-01')) TO (snowflake_min_id('2024-03-01'));
CREATE TABLE events_2024_03 PARTITION OF events
  FOR VALUES FROM (snowflake_min_id('2024-03-01')) TO (snowflake_min_id('2024-04-01'));
DO $$
DECLARE
  month timestamptz := date_trunc('month', now());
BEGIN
  EXECUTE format('CREATE TABLE events_now PARTITION OF events FOR VALUES FROM (%s) TO (%s)',
                 snowflake_min_id(month), snowflake_min_id(month + interval '1 month'));
END $$;
INSERT INTO events SELECT snowflake_backfill_id(ts), 'backfilled'
FROM generate_series('2024-02-25'::timestamptz, '2024-03-05', interval '1 hour') AS ts;
INSERT INTO events (id, body) SELECT snowflake_nextval(), 'new' FROM generate_series(1, 100);
SELECT tableoid::regclass AS partition, body, count(*),
       bool_and(date_trunc('month', snowflake_timestamp(id)) =
                CASE tableoid::regclass::text WHEN 'events_now' THEN date_trunc('month', now())
                     ELSE to_timestamp(right(tableoid::regclass::text, 7), 'YYYY_MM') END) AS month_matches
FROM events GROUP BY 1, 2 ORDER BY 1;
EXPLAIN (COSTS OFF) SELECT count(*) FROM events WHERE id <@ tstzrange('2024-03-02', '2024-03-03');
EXPLAIN (COSTS OFF)
SELECT count(*) FROM events WHERE id >= snowflake_min_id('2024-02-26') AND id < snowflake_min_id('2024-02-27');
DROP TABLE events;

-- Backfilled IDs: the reserved node 1023, the time asked for, the caller's sequence; never a generated ID.
SELECT (snowflake_parse(snowflake_backfill_id('2015-06-01 12:00:00.1234+00', 42))).*;
SELECT snowflake_backfill_id('2015-06-01 12:00:00.123+00') = snowflake_backfill_id('2015-06-01 12:00:00.1239+00')
       AS same_millisecond_same_id;
SELECT count(*) AS generated_on_backfill_node FROM issued WHERE (snowflake_parse(id)).node = 1023;
-- Numbering the rows of each millisecond keeps backfilled IDs distinct.
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids
FROM (SELECT snowflake_backfill_id(ts, (row_number() OVER (PARTITION BY date_trunc('milliseconds', ts)) - 1)::int)
             AS id
      FROM generate_series(1, 5000) AS g, LATERAL (SELECT '2015-06-01'::timestamptz + (g % 7) * interval '1 ms') AS t(ts)) AS s;
SELECT snowflake_backfill_id('2015-06-01', 4096);
\echo :SQLSTATE
SELECT snowflake_backfill_id('2015-06-01', -1);
\echo :SQLSTATE
SELECT snowflake_backfill_id('1999-01-01');
\echo :SQLSTATE
SELECT snowflake_backfill_id('infinity');
\echo :SQLSTATE
DROP TABLE readings;
