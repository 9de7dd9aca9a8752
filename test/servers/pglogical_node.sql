-- pglogical, both ways, step 1 on each server (psql variables me, my_dsn):
-- the node, and the table in its default replication set.
CREATE EXTENSION pglogical;
SELECT pglogical.create_node(node_name := :'me', dsn := :'my_dsn');
SELECT pglogical.replication_set_add_table('default', 'items');
