-- What the four concurrent sessions issued: 200,000 distinct IDs from four
-- backends, increasing within each session, all on node 7.
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids, count(DISTINCT backend) AS backends
FROM concurrent_ids;
SELECT bool_and(id > previous) AS increasing_per_session
FROM (SELECT id, lag(id) OVER (PARTITION BY backend ORDER BY n) AS previous FROM concurrent_ids) AS s
WHERE previous IS NOT NULL;
SELECT bool_and(p.node = 7) AS all_node_7 FROM concurrent_ids, LATERAL snowflake_parse(id) AS p;
DROP TABLE concurrent_ids;
