-- The snowflake type: bigint underneath, a JSON string on the way out.
-- Defaults, casts, JSON, ordering, unique and hash indexes, index use for
-- bigint and integer comparisons and joins with bigint foreign keys (EXPLAIN),
-- and a pg_dump/restore round trip.
CREATE TABLE sf_posts (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(), title text);
CREATE TABLE sf_comments (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), post_id bigint REFERENCES sf_posts, body text);
INSERT INTO sf_posts (title) SELECT 'post ' || g FROM generate_series(1, 2000) g;
INSERT INTO sf_comments (post_id, body) SELECT id, 'c' FROM sf_posts, generate_series(1, 3);
-- Explicit values: integer, bigint, quoted text (as PostgREST and drivers send them).
INSERT INTO sf_posts VALUES (1, 'one'), (2::bigint, 'two'), ('3', 'three');
ANALYZE sf_posts, sf_comments;

SELECT format_type(atttypid, atttypmod) AS type, pg_get_expr(adbin, adrelid) AS default
FROM pg_attribute JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum WHERE attrelid = 'sf_posts'::regclass;
SELECT count(*) AS posts, count(DISTINCT id) AS distinct_ids,
       bool_and(snowflake_timestamp(id) > now() - interval '1 hour') FILTER (WHERE id > 3) AS decodes
FROM sf_posts;

-- JSON: a string, in every builder.
SELECT to_json(p) AS to_json, to_jsonb(p) AS to_jsonb, row_to_json(p) AS row_to_json FROM sf_posts p WHERE id = 2;
SELECT json_agg(id ORDER BY id) AS json_agg, jsonb_agg(id ORDER BY id) AS jsonb_agg,
       json_build_object('id', id) AS json_build_object, jsonb_build_object('id', id) AS jsonb_build_object
FROM sf_posts WHERE id <= 3 GROUP BY id ORDER BY id LIMIT 1;
SELECT jsonb_typeof(to_jsonb(id)) AS jsonb_type, json_typeof(to_json(id)) AS json_type,
       (to_jsonb(id) #>> '{}')::snowflake = id AS round_trip
FROM sf_posts ORDER BY id DESC LIMIT 1;
-- Arithmetic and min()/max() leave the type (bigint, a JSON number); a cast brings it back.
SELECT pg_typeof(id + 0) AS plus, to_json(id + 0) AS number, to_json((id + 0)::snowflake) AS string FROM sf_posts WHERE id = 3;
SELECT pg_typeof(min(id)) AS min, to_json(min(id)) AS number, to_json(min(id)::snowflake) AS string FROM sf_posts;
-- json_populate_record reads strings and numbers alike through the input function.
SELECT (json_populate_record(NULL::sf_posts, '{"id": "9007199254740993", "title": "t"}')).id AS from_string,
       (json_populate_record(NULL::sf_posts, '{"id": 9007199254740993, "title": "t"}')).id AS from_number;

-- Order, uniqueness, operators: bigint's, through the implicit binary cast.
SELECT array_agg(id ORDER BY id) AS ascending FROM sf_posts WHERE id <= 3;
SELECT (SELECT array_agg(id::bigint) FROM (SELECT id FROM sf_posts ORDER BY id DESC LIMIT 3) t)
     = (SELECT array_agg(id) FROM (SELECT id::bigint AS id FROM sf_posts ORDER BY 1 DESC LIMIT 3) t) AS same_order_as_bigint;
\set ON_ERROR_STOP 0
INSERT INTO sf_posts VALUES (2, 'duplicate');
\echo :SQLSTATE
SELECT '9223372036854775808'::snowflake;
\echo :SQLSTATE
SELECT 'abc'::snowflake;
\echo :SQLSTATE
\set ON_ERROR_STOP 1
SELECT o.opcname, am.amname FROM pg_index i JOIN pg_opclass o ON o.oid = i.indclass[0] JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_am am ON am.oid = c.relam WHERE i.indrelid = 'sf_posts'::regclass;

-- The primary key serves integer, bigint and text comparisons, IN lists, ranges and ORDER BY ... LIMIT.
EXPLAIN (COSTS OFF) SELECT * FROM sf_posts WHERE id = 123;
EXPLAIN (COSTS OFF) SELECT * FROM sf_posts WHERE id = 123::bigint;
EXPLAIN (COSTS OFF) SELECT * FROM sf_posts WHERE id = '123';
EXPLAIN (COSTS OFF) SELECT * FROM sf_posts WHERE id = ANY ('{1,2,3}'::bigint[]);
EXPLAIN (COSTS OFF) SELECT * FROM sf_posts WHERE id > 5 AND id < 10;
EXPLAIN (COSTS OFF) SELECT * FROM sf_posts ORDER BY id DESC LIMIT 5;
-- Joins with a bigint foreign key: index nested loop, hash and merge joins all apply.
EXPLAIN (COSTS OFF) SELECT * FROM sf_comments c JOIN sf_posts p ON p.id = c.post_id WHERE c.id = 1;
SET enable_nestloop = off; SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM sf_comments c JOIN sf_posts p ON p.id = c.post_id;
SELECT count(*) AS hash_joined FROM sf_comments c JOIN sf_posts p ON p.id = c.post_id;
SET enable_hashjoin = off; SET enable_mergejoin = on;
EXPLAIN (COSTS OFF) SELECT count(*) FROM sf_comments c JOIN sf_posts p ON p.id = c.post_id;
SELECT count(*) AS merge_joined FROM sf_comments c JOIN sf_posts p ON p.id = c.post_id;
RESET enable_nestloop; RESET enable_mergejoin; RESET enable_hashjoin;
-- A hash index, GROUP BY and DISTINCT.
CREATE INDEX sf_posts_hash ON sf_posts USING hash (id);
SET enable_indexscan = off; SET enable_bitmapscan = on;
EXPLAIN (COSTS OFF) SELECT * FROM sf_posts WHERE id = 2;
RESET enable_indexscan; RESET enable_bitmapscan;
SELECT count(*) AS groups FROM (SELECT id FROM sf_posts GROUP BY id) g;

-- Casts: snowflake to bigint implicitly, bigint and integer to snowflake on assignment.
SELECT castsource::regtype, casttarget::regtype, castcontext, castmethod FROM pg_cast
WHERE casttarget = 'snowflake'::regtype OR castsource = 'snowflake'::regtype ORDER BY 1::text, 2::text;

-- An existing bigint key switches to the type in place: neither the table nor its index is rewritten.
CREATE TABLE sf_switch (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), parent bigint REFERENCES sf_switch);
INSERT INTO sf_switch (parent) VALUES (NULL);
INSERT INTO sf_switch (parent) SELECT id FROM sf_switch;
CREATE TEMP TABLE sf_files AS SELECT relname, relfilenode FROM pg_class WHERE relname IN ('sf_switch', 'sf_switch_pkey');
ALTER TABLE sf_switch ALTER COLUMN id TYPE snowflake;
SELECT count(*) AS files_kept FROM pg_class c JOIN sf_files f USING (relname) WHERE c.relfilenode = f.relfilenode;
SELECT json_typeof(to_json(s) -> 'id') AS id, json_typeof(to_json(s) -> 'parent') AS parent FROM sf_switch s WHERE parent IS NOT NULL;
DROP TABLE sf_switch;

-- pg_dump of a database with snowflake columns restores, and new IDs come after the restored ones.
CREATE SCHEMA sf_dump;
CREATE TABLE sf_dump.items (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(), parent snowflake REFERENCES sf_dump.items);
INSERT INTO sf_dump.items (parent) VALUES (NULL);
INSERT INTO sf_dump.items (parent) SELECT min(id) FROM sf_dump.items;
CREATE DATABASE sf_type_restored;
\c sf_type_restored
CREATE EXTENSION snowflake;
\! pg_dump -Fc -n sf_dump contrib_regression | pg_restore --exit-on-error -d sf_type_restored && echo restored
SELECT count(*) AS items, count(parent) AS with_parent, format_type(min(a.atttypid), NULL) AS type
FROM sf_dump.items, pg_attribute a WHERE a.attrelid = 'sf_dump.items'::regclass AND a.attname = 'id';
INSERT INTO sf_dump.items (parent) SELECT max(id) FROM sf_dump.items;
SELECT (SELECT max(id) FROM sf_dump.items) = (SELECT id FROM sf_dump.items WHERE parent = (SELECT max(parent) FROM sf_dump.items))
       AS newest_is_largest,
       (SELECT json_agg(id) FROM sf_dump.items)::text LIKE '["%' AS json_strings;
\c contrib_regression
DROP DATABASE sf_type_restored;
DROP TABLE sf_dump.items;
DROP SCHEMA sf_dump;
DROP TABLE sf_comments, sf_posts;
