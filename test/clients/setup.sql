-- The clients suite's shared set-up, which run.sh loads into the databases postgres and template1
-- (so that a database a framework's test creates for its schema tool has it too): the extension,
-- and the two helpers the framework tests share.
CREATE EXTENSION snowflake;

-- Makes the tables PREFIX_big (a bigint key) and PREFIX_sf (a snowflake-typed key) anew, each
-- keyed by DEFAULT snowflake_nextval() with one text column v.
CREATE FUNCTION clients_make_tables(prefix text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('DROP TABLE IF EXISTS %I, %I', prefix || '_big', prefix || '_sf');
  EXECUTE format('CREATE TABLE %I (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v text)', prefix || '_big');
  EXECUTE format('CREATE TABLE %I (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(), v text)', prefix || '_sf');
END $$;

-- 'ok' when ids (comma-separated, as the client wrote the IDs it got back) are exactly the IDs in
-- the table as id::text, and at least one of them is an ID a double cannot hold (so that a match
-- proves no double was on the way); otherwise what is wrong.
CREATE FUNCTION clients_check_ids(tbl regclass, ids text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  client text[] := string_to_array(ids, ',');
  stored text[];
  exact bigint;
BEGIN
  EXECUTE format('SELECT array_agg(id::text ORDER BY id::text) FROM %s', tbl) INTO stored;
  IF (SELECT array_agg(i ORDER BY i) FROM unnest(client) i) IS DISTINCT FROM stored THEN
    RETURN format('%s holds %s IDs, the client got %s; first only in the client: %s, first only in the table: %s',
      tbl, cardinality(stored), cardinality(client), (SELECT min(i) FROM unnest(client) i WHERE i <> ALL (stored)),
      (SELECT min(i) FROM unnest(stored) i WHERE i <> ALL (client)));
  END IF;
  SELECT count(*) INTO exact FROM unnest(client) i WHERE i::bigint::float8::bigint <> i::bigint;
  IF exact = 0 THEN
    RETURN format('none of the %s IDs would be changed by a double: the match proves nothing', cardinality(client));
  END IF;
  RETURN 'ok';
END $$;
