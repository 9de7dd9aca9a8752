-- One of four sessions inserting at the same time; concurrent_check checks them.
INSERT INTO concurrent_ids SELECT pg_backend_pid(), n, snowflake_nextval() FROM generate_series(1, 50000) AS n;
