-- Rows of the last hour, by ID: each shard answers from its primary key (docs/citus.md).
SELECT count(*) FROM items WHERE id <@ tstzrange(now() - interval '1 hour', now());
