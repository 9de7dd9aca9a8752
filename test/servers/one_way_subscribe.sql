-- Native logical replication one way (test/servers/one_way.sh), on the aggregator once per writer
-- (psql variables peer, peer_dsn, copy_data): subscribe to the writer's publication. copy_data =
-- true (the default) copies the rows the writer holds, its claim among them; a subscription made
-- again takes copy_data = false, since the aggregator holds those rows already.
SET client_min_messages = warning; -- not the NOTICE that the slot was made
SELECT format('CREATE SUBSCRIPTION %I CONNECTION %L PUBLICATION items_pub WITH (copy_data = %s)',
              'from_' || :'peer', :'peer_dsn', :'copy_data') \gexec
