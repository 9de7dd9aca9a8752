-- Every insert path through the coordinator into a distributed table (the suite then
-- checks which node made each path's IDs), and the sources for INSERT ... SELECT.
CREATE TABLE items (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), path text NOT NULL, source_id bigint);
SELECT create_distributed_table('items', 'id');
CREATE TABLE events (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), kind text);
SELECT create_distributed_table('events', 'id', colocate_with => 'items');
INSERT INTO events (kind) SELECT 'source' FROM generate_series(1, 1000);
-- A source distributed on another column, not colocated with items.
CREATE TABLE visits (tenant integer NOT NULL, at timestamptz NOT NULL DEFAULT now());
SELECT create_distributed_table('visits', 'tenant');
INSERT INTO visits (tenant) SELECT g FROM generate_series(1, 1000) g;

INSERT INTO items (path) VALUES ('single-row');
INSERT INTO items (path) VALUES ('multi-row'), ('multi-row'), ('multi-row');
COPY items (path) FROM STDIN;
copy
copy
copy
copy
copy
\.
INSERT INTO items (path) SELECT 'generate_series' FROM generate_series(1, 1000);
CREATE TABLE staging (path text);
INSERT INTO staging SELECT 'local table' FROM generate_series(1, 100);
INSERT INTO items (path) SELECT path FROM staging;
INSERT INTO items (path, source_id) SELECT 'colocated', id FROM events;
INSERT INTO items (path, source_id) SELECT 'repartition', tenant FROM visits;
INSERT INTO items (path, source_id) SELECT 'pulled', id FROM events ORDER BY id LIMIT 100;

-- A reference table: a copy on every server.
CREATE TABLE tags (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), name text);
SELECT create_reference_table('tags');
INSERT INTO tags (name) SELECT 'coordinator' FROM generate_series(1, 10);

-- Citus's own answer, for comparison: a bigserial key, whose sequence each worker runs from
-- 2^48 times its group id.
CREATE TABLE counters (id bigserial PRIMARY KEY, at text);
SELECT create_distributed_table('counters', 'id');
INSERT INTO counters (at) VALUES ('coordinator');

-- Inserts from many clients (port: the server each one wrote through), on a table keyed on
-- (tenant, id) as multi-tenant schemas are: its primary key alone would not catch two servers
-- issuing the same ID.
CREATE TABLE hits (tenant integer NOT NULL, id bigint NOT NULL DEFAULT snowflake_nextval(), port integer,
                   PRIMARY KEY (tenant, id));
SELECT create_distributed_table('hits', 'tenant');
