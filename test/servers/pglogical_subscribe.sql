-- pglogical, both ways, step 2 on each server once both have run step 1 (psql variables peer, peer_dsn):
-- subscribe to the other server, taking only the rows written there (forward_origins = '{}'),
-- so that no row comes back to the server that wrote it.
SELECT pglogical.create_subscription(subscription_name := 'from_' || :'peer', provider_dsn := :'peer_dsn',
                                     replication_sets := '{default}', synchronize_structure := false,
                                     synchronize_data := false, forward_origins := '{}');
SELECT pglogical.wait_for_subscription_sync_complete('from_' || :'peer');
