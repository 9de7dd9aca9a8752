-- The rows of one hour a day ago, by ID (docs/citus.md): a small part of each shard, which answers
-- from its primary key once its statistics say so.
SELECT count(*) FROM items WHERE id <@ tstzrange(now() - interval '1 day', now() - interval '23 hours');
