-- snowflake_convert_column(): serial, identity and sequence-default columns
-- moved to snowflake_nextval() with their foreign keys (a chain, a
-- self-reference, a partitioned referencing table), a partitioned table, views
-- recreated with owner, grants and comments; every bad input; idempotence;
-- existing values kept; and a pg_dump of the result restored elsewhere.
CREATE ROLE conv_owner;
CREATE ROLE conv_reader;
CREATE ROLE conv_intruder;
CREATE SCHEMA conv AUTHORIZATION conv_owner;
GRANT USAGE ON SCHEMA conv TO conv_reader, conv_intruder;
SET search_path = conv, public;
SET ROLE conv_owner;

-- customers <- customer_profiles (1:1, itself referenced) <- badges; customers <- orders;
-- customers <- customers (referrer); customers <- events (partitioned).
CREATE TABLE customers (id serial PRIMARY KEY, name text NOT NULL, referrer_id integer REFERENCES customers);
CREATE TABLE customer_profiles (customer_id integer PRIMARY KEY REFERENCES customers, bio text);
CREATE TABLE badges (customer_id integer REFERENCES customer_profiles, badge text);
CREATE TABLE orders (id serial PRIMARY KEY, customer_id integer NOT NULL REFERENCES customers);
CREATE TABLE events (customer_id integer REFERENCES customers, day date NOT NULL) PARTITION BY RANGE (day);
CREATE TABLE events_2025 PARTITION OF events FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
CREATE TABLE events_2026 PARTITION OF events FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
INSERT INTO customers (name, referrer_id) SELECT 'c' || g, NULLIF(g - 1, 0) FROM generate_series(1, 50) g;
INSERT INTO customer_profiles SELECT id, 'bio' FROM customers WHERE id % 2 = 0;
INSERT INTO badges SELECT customer_id, 'gold' FROM customer_profiles;
INSERT INTO orders (customer_id) SELECT 1 + g % 50 FROM generate_series(1, 200) g;
INSERT INTO events SELECT 1 + g % 50, date '2025-06-01' + g FROM generate_series(1, 300) g;

-- A view on the column, a view on that view, with options, grants and comments.
CREATE VIEW customer_orders WITH (security_barrier = true) AS
    SELECT c.id, c.name, count(o.id) AS orders FROM customers c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.id;
CREATE VIEW top_customers AS SELECT id, name FROM customer_orders WHERE orders > 3;
GRANT SELECT ON customer_orders, top_customers TO conv_reader;
COMMENT ON VIEW customer_orders IS 'orders per customer';
COMMENT ON COLUMN customer_orders.orders IS 'how many';

CREATE TABLE view_before AS
SELECT c.relname, pg_get_viewdef(c.oid) AS def, c.relowner::regrole AS owner, c.relacl, c.reloptions,
       obj_description(c.oid, 'pg_class') AS comment, col_description(c.oid, 3) AS col3
FROM pg_class c WHERE c.relnamespace = 'conv'::regnamespace AND c.relkind = 'v';
CREATE TABLE customers_before AS SELECT id, name, referrer_id FROM customers;

-- Bad inputs first: each leaves everything as it was.
\set SHOW_CONTEXT never
\set ON_ERROR_STOP 0
SELECT snowflake_convert_column('conv.nope', 'id');
\echo :SQLSTATE
SELECT snowflake_convert_column('customers', 'nope');
\echo :SQLSTATE
SELECT snowflake_convert_column('customers', 'name');
\echo :SQLSTATE
SELECT snowflake_convert_column('customer_orders', 'id');
\echo :SQLSTATE
SELECT snowflake_convert_column('customers_id_seq', 'last_value');
\echo :SQLSTATE
SELECT snowflake_convert_column(NULL, 'id') IS NULL AS null_is_null;

CREATE TABLE gen (id integer, twice bigint GENERATED ALWAYS AS (id * 2) STORED);
SELECT snowflake_convert_column('gen', 'twice');
\echo :SQLSTATE

CREATE TABLE prices (id serial, amount numeric, code text DEFAULT 'x');
SELECT snowflake_convert_column('prices', 'amount');
\echo :SQLSTATE
CREATE TABLE stamped (id integer DEFAULT 42);
SELECT snowflake_convert_column('stamped', 'id');
\echo :SQLSTATE

-- A column in a partition key, of the table itself or of a sub-partition.
CREATE TABLE by_id (id serial, v text) PARTITION BY RANGE (id);
SELECT snowflake_convert_column('by_id', 'id');
\echo :SQLSTATE
-- (A bigint partition key needs no new type, so it converts.)
CREATE TABLE by_big_id (id bigserial, v text) PARTITION BY RANGE (id);
CREATE TABLE by_big_id_low PARTITION OF by_big_id FOR VALUES FROM (0) TO (1000000);
CREATE TABLE by_big_id_high PARTITION OF by_big_id FOR VALUES FROM (1000000) TO (MAXVALUE);
INSERT INTO by_big_id (v) VALUES ('old');
SELECT snowflake_convert_column('by_big_id', 'id');
INSERT INTO by_big_id (v) VALUES ('new');
SELECT tableoid::regclass AS partition, v FROM by_big_id ORDER BY id;
CREATE TABLE by_day (id serial, day date) PARTITION BY RANGE (day);
CREATE TABLE by_day_2026 PARTITION OF by_day FOR VALUES FROM ('2026-01-01') TO ('2027-01-01') PARTITION BY HASH (id);
CREATE TABLE by_day_2026_0 PARTITION OF by_day_2026 FOR VALUES WITH (MODULUS 1, REMAINDER 0);
SELECT snowflake_convert_column('by_day', 'id');
\echo :SQLSTATE
-- A partition's column follows its root.
SELECT snowflake_convert_column('events_2025', 'customer_id');
\echo :SQLSTATE

-- Legacy inheritance is not followed.
CREATE TABLE parent_t (id serial PRIMARY KEY);
CREATE TABLE child_t () INHERITS (parent_t);
SELECT snowflake_convert_column('parent_t', 'id');
\echo :SQLSTATE

-- One sequence feeding two tables.
CREATE TABLE shared_a (id serial);
CREATE TABLE shared_b (id integer DEFAULT nextval('shared_a_id_seq'));
SELECT snowflake_convert_column('shared_a', 'id');
\echo :SQLSTATE

-- Values already in snowflake range (terse: the detail shows this millisecond's ID).
CREATE TABLE huge (id bigserial);
INSERT INTO huge VALUES (DEFAULT), (snowflake_min_id(now() + interval '1 day'));
\set VERBOSITY terse
SELECT snowflake_convert_column('huge', 'id');
\echo :SQLSTATE
\set VERBOSITY default

-- A materialized view on the column.
CREATE TABLE reports (id serial);
CREATE MATERIALIZED VIEW report_ids AS SELECT id FROM reports;
SELECT snowflake_convert_column('reports', 'id');
\echo :SQLSTATE

-- Privileges: not the owner of the table, then not the owner of a referencing table.
RESET ROLE;
SET ROLE conv_intruder;
SELECT snowflake_convert_column('conv.customers', 'id');
\echo :SQLSTATE
RESET ROLE;
CREATE TABLE conv.foreign_orders (customer_id integer REFERENCES conv.customers);
ALTER TABLE conv.foreign_orders OWNER TO conv_reader;
SET ROLE conv_owner;
SELECT snowflake_convert_column('customers', 'id');
\echo :SQLSTATE
RESET ROLE;
DROP TABLE conv.foreign_orders;
SET ROLE conv_owner;
\set ON_ERROR_STOP 1

-- Nothing changed so far.
SELECT count(*) FILTER (WHERE atttypid = 'int8'::regtype) AS bigint_columns
FROM pg_attribute WHERE attrelid IN ('customers'::regclass, 'orders'::regclass, 'customer_profiles'::regclass) AND attnum > 0;

-- The conversion, in one transaction with a check before commit.
BEGIN;
SELECT snowflake_convert_column('customers', 'id');
SELECT a.attrelid::regclass AS rel, a.attname, format_type(a.atttypid, a.atttypmod) AS type
FROM pg_attribute a
WHERE a.attrelid IN (SELECT oid FROM pg_class WHERE relnamespace = 'conv'::regnamespace AND relkind IN ('r', 'p', 'v'))
  AND a.attname IN ('id', 'customer_id', 'referrer_id') AND a.attnum > 0
  AND a.attrelid::regclass::text IN ('customers', 'customer_profiles', 'badges', 'orders', 'events', 'events_2025',
                                     'events_2026', 'customer_orders', 'top_customers')
ORDER BY a.attrelid::regclass::text, a.attname;
COMMIT;

SELECT pg_get_expr(adbin, adrelid) AS customers_default FROM pg_attrdef WHERE adrelid = 'customers'::regclass;
SELECT to_regclass('conv.customers_id_seq') IS NULL AS sequence_dropped;
SELECT pg_get_serial_sequence('conv.orders', 'id') AS orders_sequence_untouched;

-- Views: same definition, owner, grants, options and comments.
SELECT b.relname, pg_get_viewdef(c.oid) = b.def AS same_def, c.relowner::regrole = b.owner AS same_owner,
       c.relacl = b.relacl AS same_grants, c.reloptions IS NOT DISTINCT FROM b.reloptions AS same_options,
       obj_description(c.oid, 'pg_class') IS NOT DISTINCT FROM b.comment AS same_comment,
       col_description(c.oid, 3) IS NOT DISTINCT FROM b.col3 AS same_column_comment
FROM view_before b JOIN pg_class c ON c.relname = b.relname AND c.relnamespace = 'conv'::regnamespace
ORDER BY 1;
SET ROLE conv_reader;
SELECT count(*) AS top_customers FROM top_customers;
SET ROLE conv_owner;

-- Existing values kept; every foreign key still holds.
SELECT (SELECT count(*) FROM customers) AS customers,
       NOT EXISTS (SELECT id, name, referrer_id FROM customers EXCEPT SELECT id, name, referrer_id FROM customers_before)
       AND NOT EXISTS (SELECT id, name, referrer_id FROM customers_before EXCEPT SELECT id, name, referrer_id FROM customers)
       AS values_kept,
       (SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id) AS orders_joined,
       (SELECT count(*) FROM events e JOIN customers c ON c.id = e.customer_id) AS events_joined;

-- New rows get snowflake IDs above the old ones; ID order is still insertion order.
INSERT INTO customers (name) VALUES ('new1'), ('new2');
INSERT INTO customer_profiles SELECT id, 'new' FROM customers WHERE name = 'new1';
SELECT count(*) FILTER (WHERE id > 50) AS new_rows,
       bool_and(id >= snowflake_min_id(now() - interval '1 minute')) FILTER (WHERE id > 50) AS new_ids_are_snowflakes,
       (SELECT array_agg(name ORDER BY id) FROM customers WHERE id > 48) AS by_id
FROM customers;

-- Idempotent: a second run changes nothing.
CREATE TEMP TABLE oids_before AS SELECT oid, relname FROM pg_class WHERE relnamespace = 'conv'::regnamespace;
SELECT snowflake_convert_column('customers', 'id');
SELECT count(*) AS objects_changed FROM (
    (SELECT oid, relname FROM pg_class WHERE relnamespace = 'conv'::regnamespace EXCEPT SELECT * FROM oids_before)
    UNION ALL
    (SELECT * FROM oids_before EXCEPT SELECT oid, relname FROM pg_class WHERE relnamespace = 'conv'::regnamespace)) d;

-- A foreign key added later as integer: a second run widens it.
CREATE TABLE late_refs (customer_id integer REFERENCES customers);
INSERT INTO late_refs VALUES (1);
SELECT snowflake_convert_column('customers', 'id');
SELECT format_type(atttypid, atttypmod) AS late_refs_type, (SELECT count(*) FROM late_refs JOIN customers ON id = customer_id) AS joined
FROM pg_attribute WHERE attrelid = 'late_refs'::regclass AND attname = 'customer_id';

-- A partitioned table's own column, with a view on one partition.
CREATE TABLE measurements (id serial, day date NOT NULL, v real, PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
CREATE TABLE measurements_2025 PARTITION OF measurements FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
CREATE TABLE measurements_2026 PARTITION OF measurements FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
INSERT INTO measurements (day, v) SELECT date '2025-12-01' + g, g FROM generate_series(1, 60) g;
CREATE VIEW measurements_2026_view AS SELECT id, v FROM measurements_2026;
SELECT snowflake_convert_column('measurements', 'id');
INSERT INTO measurements (day, v) VALUES ('2026-06-01', 0);
SELECT c.relname, format_type(a.atttypid, a.atttypmod) AS type, pg_get_expr(d.adbin, d.adrelid) AS default
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'id'
LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
WHERE c.relname IN ('measurements', 'measurements_2025', 'measurements_2026', 'measurements_2026_view') ORDER BY 1;
SELECT count(*) AS rows, count(*) FILTER (WHERE id > 60) AS snowflake_rows, max(id) FILTER (WHERE id <= 60) AS old_max
FROM measurements;

-- Identity columns (ALWAYS and BY DEFAULT), an unowned sequence default, and no default at all.
CREATE TABLE tickets (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY, t text);
CREATE TABLE tags (id smallint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY);
CREATE TABLE ticket_tags (ticket_id integer REFERENCES tickets, tag_id smallint REFERENCES tags);
CREATE SEQUENCE legacy_ids;
CREATE TABLE legacy (id integer DEFAULT nextval('legacy_ids') PRIMARY KEY);
CREATE TABLE imported (id integer PRIMARY KEY);
INSERT INTO tickets (t) VALUES ('a'), ('b');
INSERT INTO tags DEFAULT VALUES;
INSERT INTO ticket_tags VALUES (1, 1), (2, 1);
INSERT INTO legacy DEFAULT VALUES;
INSERT INTO imported VALUES (7);
SELECT snowflake_convert_column('tickets', 'id');
SELECT snowflake_convert_column('tags', 'id');
SELECT snowflake_convert_column('legacy', 'id');
SELECT snowflake_convert_column('imported', 'id');
INSERT INTO tickets (t) VALUES ('c');
INSERT INTO tags DEFAULT VALUES;
INSERT INTO legacy DEFAULT VALUES;
INSERT INTO imported DEFAULT VALUES;
SELECT c.relname, a.attidentity = '' AS no_identity, format_type(a.atttypid, a.atttypmod) AS type,
       pg_get_expr(d.adbin, d.adrelid) AS default, pg_get_serial_sequence(c.oid::regclass::text, 'id') AS owned_sequence
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'id'
LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
WHERE c.relname IN ('tickets', 'tags', 'legacy', 'imported') ORDER BY 1;
SELECT format_type(atttypid, atttypmod) AS ticket_tags_types FROM pg_attribute
WHERE attrelid = 'ticket_tags'::regclass AND attnum > 0 ORDER BY attnum;
SELECT (SELECT count(*) FILTER (WHERE id > 1000) FROM tickets) AS tickets_new,
       (SELECT count(*) FILTER (WHERE id > 1000) FROM tags) AS tags_new,
       (SELECT count(*) FILTER (WHERE id > 1000) FROM legacy) AS legacy_new,
       (SELECT count(*) FILTER (WHERE id > 1000) FROM imported) AS imported_new,
       to_regclass('conv.legacy_ids') IS NOT NULL AS unowned_sequence_kept;
RESET ROLE;

-- Views come back exactly: an owner whose name needs quotes, no default privileges of the
-- converting role added, a temporary view stays temporary. A foreign key on one partition
-- directly is followed. A column already of the snowflake type is never narrowed.
CREATE ROLE "Data Team";
CREATE TABLE conv.regions (id serial, region int NOT NULL, PRIMARY KEY (id, region)) PARTITION BY LIST (region);
CREATE TABLE conv.regions_1 PARTITION OF conv.regions FOR VALUES IN (1);
ALTER TABLE conv.regions_1 ADD UNIQUE (id);
CREATE TABLE conv.region_notes (region_id int REFERENCES conv.regions_1 (id));
INSERT INTO conv.regions (region) VALUES (1), (1);
INSERT INTO conv.region_notes VALUES (2);
CREATE VIEW conv.region_ids AS SELECT id FROM conv.regions;
ALTER VIEW conv.region_ids OWNER TO "Data Team";
GRANT SELECT ON conv.region_ids TO conv_reader;
CREATE TEMP VIEW region_temp AS SELECT id FROM conv.regions;
ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO conv_intruder;
SELECT snowflake_convert_column('conv.regions', 'id');
ALTER DEFAULT PRIVILEGES REVOKE SELECT ON TABLES FROM conv_intruder;
SELECT format_type(atttypid, atttypmod) AS region_notes_type FROM pg_attribute
WHERE attrelid = 'conv.region_notes'::regclass AND attname = 'region_id';
SELECT pg_get_userbyid(relowner) AS view_owner,
       has_table_privilege('conv_reader', oid, 'SELECT') AS reader_kept,
       has_table_privilege('conv_intruder', oid, 'SELECT') AS default_privilege_added,
       has_table_privilege('Data Team', oid, 'SELECT') AS owner_kept
FROM pg_class WHERE oid = 'conv.region_ids'::regclass;
SELECT relpersistence AS temp_view_persistence FROM pg_class WHERE oid = 'region_temp'::regclass;
INSERT INTO conv.regions (region) VALUES (1);
SELECT count(*) FILTER (WHERE id > 1000) AS regions_new FROM conv.regions;
CREATE TABLE conv.posts (id serial PRIMARY KEY);
CREATE TABLE conv.post_tags (post_id int REFERENCES conv.posts);
SELECT snowflake_convert_column('conv.posts', 'id');
ALTER TABLE conv.posts ALTER COLUMN id TYPE snowflake;
ALTER TABLE conv.post_tags ALTER COLUMN post_id TYPE snowflake;
SELECT snowflake_convert_column('conv.posts', 'id');
SELECT attrelid::regclass AS rel, attname, atttypid::regtype AS type FROM pg_attribute
WHERE (attrelid, attname) IN (('conv.posts'::regclass, 'id'), ('conv.post_tags'::regclass, 'post_id')) ORDER BY 1;

-- pg_dump of the converted schema restores into another database.
CREATE DATABASE convert_restored;
\c convert_restored
CREATE EXTENSION snowflake;
\! pg_dump -Fc -n conv contrib_regression | pg_restore --exit-on-error -d convert_restored && echo restored
SET search_path = conv, public;
SELECT (SELECT count(*) FROM customers) AS customers, (SELECT count(*) FROM orders) AS orders,
       (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM measurements) AS measurements,
       (SELECT count(*) FROM top_customers) AS top_customers;
SELECT pg_get_expr(adbin, adrelid) AS restored_default FROM pg_attrdef WHERE adrelid = 'customers'::regclass;
INSERT INTO customers (name) VALUES ('after restore');
SELECT (SELECT id FROM customers WHERE name = 'after restore') > (SELECT max(id) FROM customers WHERE name <> 'after restore')
       AS new_id_above_restored;
\c contrib_regression
DROP DATABASE convert_restored;
SET client_min_messages = warning;
DROP SCHEMA conv CASCADE;
DROP ROLE conv_owner, conv_reader, conv_intruder, "Data Team";
