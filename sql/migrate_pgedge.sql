-- Migrating from pgEdge snowflake (2.x). Its extension is also called
-- snowflake, so it cannot be installed beside this one: a stand-in schema
-- "snowflake" issues IDs as pgEdge does (41 bits of milliseconds since
-- 2023-01-01, a 12-bit counter, then a 10-bit node: node 3 here) from
-- snowflake.nextval(regclass), and columns carry pgEdge's two default forms.
-- Its IDs decode in an explicit layout, snowflake_convert_column() takes the
-- columns over, and new IDs sort above the old ones.
CREATE EXTENSION IF NOT EXISTS snowflake;
CREATE SCHEMA snowflake;
CREATE SEQUENCE snowflake.id_seq;
CREATE FUNCTION snowflake.nextval(seq regclass DEFAULT 'snowflake.id_seq') RETURNS bigint
LANGUAGE sql VOLATILE AS $$
  SELECT ((floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint - 1672531200000) << 22)
         | ((pg_catalog.nextval(seq) % 4096) << 10) | 3
$$;
CREATE TABLE pgedge_orders (id bigserial PRIMARY KEY, item text);
ALTER TABLE pgedge_orders ALTER COLUMN id SET DEFAULT snowflake.nextval('pgedge_orders_id_seq'::regclass);
CREATE TABLE pgedge_events (id bigint PRIMARY KEY DEFAULT snowflake.nextval(), kind text);
CREATE TABLE pgedge_items (id bigserial PRIMARY KEY, name text);
ALTER TABLE pgedge_items ALTER COLUMN id SET DEFAULT snowflake.nextval('pgedge_items_id_seq'::regclass);
SELECT now() AS before_old \gset
INSERT INTO pgedge_orders (item) SELECT 'old ' || g FROM generate_series(1, 5) g;
INSERT INTO pgedge_events (kind) SELECT 'old ' || g FROM generate_series(1, 5) g;
INSERT INTO pgedge_items (name) SELECT 'old ' || g FROM generate_series(1, 5) g;

-- pgEdge's IDs decode with its epoch and field order: node 3, times of this test.
SELECT count(*) AS old_orders,
       bool_and((p).node = 3) AS node_3,
       bool_and((p).ts BETWEEN date_trunc('milliseconds', :'before_old'::timestamptz) AND clock_timestamp()) AS times_of_this_test
FROM (SELECT snowflake_parse(id, 'twitter,epoch=1672531200000,order=seq-node') AS p FROM pgedge_orders) s;

-- Both default forms convert; the serial's own sequence is dropped, pgEdge's shared one kept.
SELECT snowflake_convert_column('pgedge_orders', 'id');
SELECT snowflake_convert_column('pgedge_events', 'id');
SELECT adrelid::regclass AS tbl, pg_get_expr(adbin, adrelid) AS new_default
FROM pg_attrdef WHERE adrelid IN ('pgedge_orders'::regclass, 'pgedge_events'::regclass) ORDER BY 1;
SELECT to_regclass('pgedge_orders_id_seq') IS NULL AS owned_sequence_dropped,
       to_regclass('snowflake.id_seq') IS NOT NULL AS shared_sequence_kept;

-- New IDs come from this server (node 7) and sort above every old one.
INSERT INTO pgedge_orders (item) SELECT 'new ' || g FROM generate_series(1, 5) g;
SELECT min(id) FILTER (WHERE item LIKE 'new%') > max(id) FILTER (WHERE item LIKE 'old%') AS new_above_old,
       bool_and((snowflake_parse(id)).node = 7) FILTER (WHERE item LIKE 'new%') AS new_on_node_7,
       count(DISTINCT id) AS distinct_ids
FROM pgedge_orders;

-- Only pgEdge's own call shapes are taken for a sequence default.
CREATE TABLE pgedge_odd (id bigint DEFAULT snowflake.nextval('snowflake.id_seq'::regclass) + 1);
SELECT snowflake_convert_column('pgedge_odd', 'id');


-- The other route: DROP EXTENSION snowflake CASCADE on pgEdge's server drops
-- its functions and with them the column defaults (here: the stand-in schema).
DROP SCHEMA snowflake CASCADE;
SELECT count(*) AS items_defaults_left FROM pg_attrdef WHERE adrelid = 'pgedge_items'::regclass;
SELECT snowflake_convert_column('pgedge_items', 'id');
INSERT INTO pgedge_items (name) VALUES ('new');
SELECT (SELECT id FROM pgedge_items WHERE name = 'new') > (SELECT max(id) FROM pgedge_items WHERE name <> 'new') AS new_above_old;
DROP TABLE pgedge_orders, pgedge_events, pgedge_odd, pgedge_items;
