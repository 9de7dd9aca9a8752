-- Native logical replication, both ways, step 2 on each server once both have run step 1
-- (psql variables peer, peer_dsn): subscribe to the other server, taking only the rows written
-- there (origin = none), so that no row comes back to the server that wrote it, and copying
-- nothing (copy_data = false): the second copy would bring back the rows the first one took from
-- this server, its node check's claim among them, and stall on their keys. The claims need no
-- copy: each renewal sends a server's claim whole.
SELECT format('CREATE SUBSCRIPTION %I CONNECTION %L PUBLICATION items_pub WITH (origin = none, copy_data = false)',
              'from_' || :'peer', :'peer_dsn') \gexec
