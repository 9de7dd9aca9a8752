// tokio-postgres 0.7 (Debian's librust-tokio-postgres-dev, built offline) with
// snowflake keys: rows inserted singly and in bulk into a bigint-keyed and a
// snowflake-keyed table (test/clients/setup.sql's clients_make_tables), read
// and written through the Snowflake newtype of src/lib.rs; every returned ID
// equal to the table's id::text (with IDs a double cannot hold among them) and
// rows read back by ID; plain i64 on the bigint key. The traps: i64 and
// String both refuse a snowflake column, and an i64 parameter for one is
// refused. Run by test/clients/run.sh.
use snowflake_clients::Snowflake;
use tokio_postgres::{Client, NoTls};

/// A connection to the clients suite's server (PGHOST, PGPORT, PGUSER, PGDATABASE).
async fn connect() -> Client {
    let config = format!(
        "host={} port={} user={} dbname={}",
        std::env::var("PGHOST").unwrap(),
        std::env::var("PGPORT").unwrap(),
        std::env::var("PGUSER").unwrap(),
        std::env::var("PGDATABASE").unwrap()
    );
    let (client, connection) = tokio_postgres::connect(&config, NoTls).await.unwrap();
    tokio::spawn(connection);
    client
}

#[tokio::test]
async fn the_newtype_keeps_ids_exact_on_both_key_types() {
    let client = connect().await;
    client.execute("SELECT clients_make_tables('rust')", &[]).await.unwrap();
    let node: i64 = std::env::var("SNOWFLAKE_NODE").unwrap().parse().unwrap();
    for table in ["rust_big", "rust_sf"] {
        let one: Snowflake = client
            .query_one(&format!("INSERT INTO {table} (v) VALUES ($1) RETURNING id"), &[&"one"])
            .await
            .unwrap()
            .get(0);
        let values: Vec<String> = (0..300).map(|n| format!("b{n}")).collect();
        let bulk = client
            .query(&format!("INSERT INTO {table} (v) SELECT unnest($1::text[]) RETURNING id"), &[&values])
            .await
            .unwrap();
        let mut ids = vec![one];
        ids.extend(bulk.iter().map(|row| row.get::<_, Snowflake>(0)));
        // An explicit ID goes in through the newtype too.
        let explicit = Snowflake(ids[ids.len() - 1].0 + 1);
        client
            .execute(&format!("INSERT INTO {table} (id, v) VALUES ($1, 'explicit')"), &[&explicit])
            .await
            .unwrap();
        ids.push(explicit);
        for id in &ids {
            assert_eq!(id.0 >> 12 & 1023, node, "{table}: {id:?} is not of node {node}");
            let back: Snowflake = client
                .query_one(&format!("SELECT id FROM {table} WHERE id = $1"), &[id])
                .await
                .unwrap()
                .get(0);
            assert_eq!(back, *id);
        }
        let texts: Vec<String> = ids.iter().map(|id| id.0.to_string()).collect();
        let verdict: String = client
            .query_one("SELECT clients_check_ids($1::text::regclass, $2)", &[&table, &texts.join(",")])
            .await
            .unwrap()
            .get(0);
        assert_eq!(verdict, "ok", "{table}");
    }
}

#[tokio::test]
async fn trap_i64_and_string_refuse_a_snowflake_column() {
    let client = connect().await;
    client.execute("SELECT clients_make_tables('rust_trap')", &[]).await.unwrap();
    // A bigint key is int8, which i64 reads and writes as it is.
    let big: i64 = client
        .query_one("INSERT INTO rust_trap_big (v) VALUES ('i64') RETURNING id", &[])
        .await
        .unwrap()
        .get(0);
    client.execute("INSERT INTO rust_trap_big (id, v) VALUES ($1, 'i64')", &[&(big + 1)]).await.unwrap();
    let row = client.query_one("INSERT INTO rust_trap_sf (v) VALUES ('raw') RETURNING id", &[]).await.unwrap();
    assert!(row.try_get::<_, i64>(0).is_err());
    assert!(row.try_get::<_, String>(0).is_err());
    let refused = client.execute("INSERT INTO rust_trap_sf (id, v) VALUES ($1, 'i64')", &[&1i64]).await;
    assert!(refused.unwrap_err().to_string().contains("error serializing parameter 0"));
}
