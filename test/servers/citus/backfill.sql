-- A new column of IDs for every existing row: each worker fills its own shards.
ALTER TABLE items ADD COLUMN public_id bigint DEFAULT snowflake_nextval();
