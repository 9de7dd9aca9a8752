-- Serial keys for snowflake_convert_column(): a distribution column, a reference table's key, another
-- distributed table's key.
CREATE TABLE legacy (id serial PRIMARY KEY, note text);
SELECT create_distributed_table('legacy', 'id');
INSERT INTO legacy (note) SELECT 'before' FROM generate_series(1, 100);
CREATE TABLE countries (id serial PRIMARY KEY, name text);
SELECT create_reference_table('countries');
INSERT INTO countries (name) VALUES ('before'), ('before');
-- A serial key that is not the distribution column.
CREATE TABLE orders (tenant integer, id serial, PRIMARY KEY (tenant, id));
SELECT create_distributed_table('orders', 'tenant');
INSERT INTO orders (tenant) SELECT g % 10 FROM generate_series(1, 100) g;
-- A serial distribution column that a colocated table's foreign key references.
CREATE TABLE parent (id serial PRIMARY KEY);
SELECT create_distributed_table('parent', 'id');
CREATE TABLE child (parent_id integer REFERENCES parent (id), note text);
SELECT create_distributed_table('child', 'parent_id', colocate_with => 'parent');
INSERT INTO parent SELECT FROM generate_series(1, 10);
INSERT INTO child SELECT id, 'before' FROM parent;
