-- Native logical replication, both ways, step 2 on each server once both have run step 1
-- (psql variables peer, peer_dsn): subscribe to the other server, taking only the rows written
-- there (origin = none), so that no row comes back to the server that wrote it.
SELECT format('CREATE SUBSCRIPTION %I CONNECTION %L PUBLICATION items_pub WITH (origin = none, copy_data = false)',
              'from_' || :'peer', :'peer_dsn') \gexec
