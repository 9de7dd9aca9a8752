-- A serial distribution column, and a serial reference table, for snowflake_convert_column().
CREATE TABLE legacy (id serial PRIMARY KEY, note text);
SELECT create_distributed_table('legacy', 'id');
INSERT INTO legacy (note) SELECT 'before' FROM generate_series(1, 100);
CREATE TABLE countries (id serial PRIMARY KEY, name text);
SELECT create_reference_table('countries');
INSERT INTO countries (name) VALUES ('before'), ('before');
