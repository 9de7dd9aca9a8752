-- The replicated table of the logical-replication suites (test/servers/multimaster.sh,
-- test/servers/one_way.sh), created on every server.
-- server: which server wrote the row (its number); phase: which step of the suite wrote it.
CREATE EXTENSION snowflake;
CREATE TABLE items (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), server integer NOT NULL,
                    phase integer NOT NULL);

-- One writer: inserts a row per transaction for `seconds`, pausing 1 ms between rows, and counts the
-- rows committed, the inserts refused because their ID already existed (which happens only when
-- two servers share a node and the other server's row arrived first), and the inserts refused
-- because the node check found another server on this server's node (SQLSTATE SN001).
CREATE PROCEDURE write_items(server integer, phase integer, seconds float8,
                             INOUT committed bigint DEFAULT 0, INOUT refused bigint DEFAULT 0,
                             INOUT node_refused bigint DEFAULT 0)
LANGUAGE plpgsql AS $$
DECLARE
  stop timestamptz := clock_timestamp() + seconds * interval '1 second';
BEGIN
  WHILE clock_timestamp() < stop LOOP
    BEGIN
      INSERT INTO items (server, phase) VALUES (write_items.server, write_items.phase);
      committed := committed + 1;
    EXCEPTION
      WHEN unique_violation THEN
        refused := refused + 1;
      WHEN SQLSTATE 'SN001' THEN
        node_refused := node_refused + 1;
    END;
    COMMIT;
    PERFORM pg_sleep(0.001);
  END LOOP;
END
$$;
