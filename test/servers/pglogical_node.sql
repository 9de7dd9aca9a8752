-- pglogical, both ways, step 1 on each server (psql variables me, my_dsn):
-- the node, and the table in its default replication set, with the node check's claims (the one
-- step they need: a replication set holds only the tables added to it).
CREATE EXTENSION pglogical;
SELECT pglogical.create_node(node_name := :'me', dsn := :'my_dsn');
SELECT pglogical.replication_set_add_table('default', 'items');
SELECT pglogical.replication_set_add_table('default', 'snowflake_node_check.claims');
