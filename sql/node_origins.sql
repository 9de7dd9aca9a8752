-- snowflake_node_origins() on a server with commit timestamps (node 5): rows whose replication
-- origin was dropped since (a dropped subscription, the catch-up of a Citus shard move) and rows
-- whose origin is unknown are labelled so, with shared_node NULL, and never make a known origin's
-- node look shared. Origins are set up by hand, as an apply worker would.
CREATE DATABASE snowflake_origins;
\c snowflake_origins
CREATE EXTENSION snowflake;
-- An ID on node n with sequence s, in this millisecond (low bits set, as a real ID's are).
CREATE FUNCTION id_on(n integer, s integer) RETURNS bigint
LANGUAGE sql AS $$ SELECT snowflake_min_id(clock_timestamp()) | (n::bigint << 12) | s $$;

CREATE TABLE items (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), src text);
INSERT INTO items (src) SELECT 'local' FROM generate_series(1, 3);
-- A live origin brings node 6 only: nothing is shared yet.
SELECT pg_replication_origin_create('peer') > 0 AS created;
SELECT pg_replication_origin_session_setup('peer');
INSERT INTO items VALUES (id_on(6, 4095), 'peer'), (id_on(6, 4094), 'peer');
SELECT pg_replication_origin_session_reset();
-- An origin that brings node 9 and node 5 (this server's), and is dropped afterwards.
SELECT pg_replication_origin_create('gone') > 0 AS created;
SELECT pg_replication_origin_session_setup('gone');
INSERT INTO items VALUES (id_on(9, 4095), 'gone'), (id_on(9, 4093), 'gone'), (id_on(5, 4095), 'gone');
SELECT pg_replication_origin_session_reset();
SELECT pg_replication_origin_drop('gone');
SELECT node, regexp_replace(origin, '[0-9]+$', 'N') AS origin, ids, shared_node FROM snowflake_node_origins('items');

-- The live origin now brings node 5 too: that is a shared node, and only the known origins say so.
SELECT pg_replication_origin_session_setup('peer');
INSERT INTO items VALUES (id_on(5, 4094), 'peer');
SELECT pg_replication_origin_session_reset();
SELECT node, regexp_replace(origin, '[0-9]+$', 'N') AS origin, ids, shared_node FROM snowflake_node_origins('items');
SELECT pg_replication_origin_drop('peer');

-- Rows of a transaction not yet committed have no recorded origin: unknown, not shared.
CREATE TABLE pending (id bigint PRIMARY KEY DEFAULT snowflake_nextval());
INSERT INTO pending SELECT FROM generate_series(1, 2);
BEGIN;
INSERT INTO pending SELECT FROM generate_series(1, 3);
SELECT node, origin, ids, shared_node FROM snowflake_node_origins('pending');
COMMIT;

\c contrib_regression
DROP DATABASE snowflake_origins;
