-- snowflake_nextval(): unique and strictly increasing across statements,
-- transactions and tables; decodes to this server's node and to now.

-- 100,000 IDs from one statement.
CREATE TEMP TABLE ids AS
SELECT n, clock_timestamp() AS before, snowflake_nextval() AS id, clock_timestamp() AS after
FROM generate_series(1, 100000) AS n;
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids FROM ids;
SELECT bool_and(id > previous) AS strictly_increasing
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS previous FROM ids) AS s WHERE previous IS NOT NULL;
-- Node 7 (main.conf), and a time from the call's start (to the millisecond) to the borrow bound (1 s)
-- past its end.
SELECT bool_and(p.node = 7) AS all_node_7,
       bool_and(p.ts BETWEEN date_trunc('milliseconds', before) AND after + interval '1 s') AS time_is_issue_time
FROM ids, LATERAL snowflake_parse(id) AS p;

-- Later statements and transactions continue above; a rolled-back ID is not handed out again.
SELECT max(id) AS last FROM ids \gset
SELECT snowflake_nextval() > :last AS next_statement_is_larger;
BEGIN;
SELECT snowflake_nextval() AS rolled_back \gset
ROLLBACK;
SELECT snowflake_nextval() > :rolled_back AS larger_than_rolled_back;

-- As a primary-key default: two tables share the one server-wide generator.
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), item text);
CREATE TABLE invoices (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), total numeric);
INSERT INTO orders (item) SELECT 'item ' || g FROM generate_series(1, 10000) AS g;
INSERT INTO invoices (total) SELECT g FROM generate_series(1, 10000) AS g;
INSERT INTO orders (item) VALUES ('one more');
SELECT count(*) AS orders, count(DISTINCT id) AS distinct_ids, min(id) > :rolled_back AS above_earlier
FROM orders;
SELECT (SELECT max(id) FROM orders WHERE item <> 'one more') < (SELECT min(id) FROM invoices)
   AND (SELECT max(id) FROM invoices) < (SELECT id FROM orders WHERE item = 'one more') AS tables_interleave_in_order;
SELECT count(*) AS shared_ids FROM orders JOIN invoices USING (id);
DROP TABLE orders, invoices;

-- The table the four concurrent sessions of the next group fill.
CREATE TABLE concurrent_ids (backend int, n int, id bigint);
