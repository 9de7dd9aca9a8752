-- IDs for the rows of an existing column that have none: the UPDATE runs on each shard.
SELECT run_command_on_shards('items', $$UPDATE %s SET public_id = snowflake_nextval() WHERE public_id IS NULL$$);
