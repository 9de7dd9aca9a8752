-- snowflake_convert_column() recreates the views on a converted column with their WITH
-- options as they were, each value quoted: security_barrier = 'True' comes back as True
-- (unquoted, the parser would write it back as true).
CREATE TABLE opt_items (id serial PRIMARY KEY);
INSERT INTO opt_items DEFAULT VALUES;
CREATE VIEW opt_view WITH (security_barrier = 'True', check_option = 'local') AS SELECT id FROM opt_items;
CREATE TABLE opt_before AS SELECT reloptions FROM pg_class WHERE oid = 'opt_view'::regclass;
SELECT reloptions FROM opt_before;
SELECT snowflake_convert_column('opt_items', 'id');
SELECT c.reloptions, c.reloptions = b.reloptions AS same_options
FROM pg_class c, opt_before b WHERE c.oid = 'opt_view'::regclass;
DROP VIEW opt_view;
DROP TABLE opt_items, opt_before;
