// Go with pgx v4 (Debian's golang-github-jackc-pgx-v4-dev, GOPATH mode) and
// snowflake keys: a pool whose AfterConnect registers the snowflake type as
// int8; rows inserted singly and in a batch into a bigint-keyed and a
// snowflake-keyed table (test/clients/setup.sql's clients_make_tables), every
// returned ID equal to the table's id::text (with IDs a double cannot hold
// among them), rows read back by ID, and JSON through the ",string" tag. The
// trap: without the registration a snowflake value cannot be scanned into an
// int64. database/sql over pgx needs nothing. Run by test/clients/run.sh.
package clients

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgtype"
	"github.com/jackc/pgx/v4"
	"github.com/jackc/pgx/v4/pgxpool"
	_ "github.com/jackc/pgx/v4/stdlib"
)

var url = fmt.Sprintf("postgres://%s@%s:%s/%s", os.Getenv("PGUSER"), os.Getenv("PGHOST"), os.Getenv("PGPORT"),
	os.Getenv("PGDATABASE"))

// registerSnowflake makes pgx read and write the snowflake type as it does int8.
func registerSnowflake(ctx context.Context, conn *pgx.Conn) error {
	var oid uint32
	if err := conn.QueryRow(ctx, "SELECT 'snowflake'::regtype::oid").Scan(&oid); err != nil {
		return err
	}
	conn.ConnInfo().RegisterDataType(pgtype.DataType{Value: &pgtype.Int8{}, Name: "snowflake", OID: oid})
	return nil
}

// Order as an API writes it: the ",string" option makes encoding/json write the ID as a string.
type Order struct {
	ID int64  `json:"id,string"`
	V  string `json:"v"`
}

// newPool connects a pool with the recipe and makes the go_big and go_sf tables anew.
func newPool(t *testing.T) *pgxpool.Pool {
	ctx := context.Background()
	config, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	config.AfterConnect = registerSnowflake
	pool, err := pgxpool.ConnectConfig(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "SELECT clients_make_tables('go')"); err != nil {
		t.Fatal(err)
	}
	return pool
}

func TestPoolWithRegisteredType(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t)
	defer pool.Close()
	node, _ := strconv.ParseInt(os.Getenv("SNOWFLAKE_NODE"), 10, 64)
	for _, table := range []string{"go_big", "go_sf"} {
		var ids []int64
		var one int64
		if err := pool.QueryRow(ctx, "INSERT INTO "+table+" (v) VALUES ($1) RETURNING id", "one").Scan(&one); err != nil {
			t.Fatal(table, err)
		}
		ids = append(ids, one)
		batch := &pgx.Batch{}
		for n := 0; n < 300; n++ {
			batch.Queue("INSERT INTO "+table+" (v) VALUES ($1) RETURNING id", fmt.Sprint("b", n))
		}
		results := pool.SendBatch(ctx, batch)
		for n := 0; n < 300; n++ {
			var id int64
			if err := results.QueryRow().Scan(&id); err != nil {
				t.Fatal(table, err)
			}
			ids = append(ids, id)
		}
		if err := results.Close(); err != nil {
			t.Fatal(err)
		}
		texts := make([]string, len(ids))
		for i, id := range ids {
			texts[i] = strconv.FormatInt(id, 10)
			if id>>12&1023 != node {
				t.Fatalf("%s: ID %d is not of node %d", table, id, node)
			}
			var back Order
			if err := pool.QueryRow(ctx, "SELECT id, v FROM "+table+" WHERE id = $1", id).Scan(&back.ID, &back.V); err != nil || back.ID != id {
				t.Fatalf("%s: ID %d read back as %d (%v)", table, id, back.ID, err)
			}
		}
		var verdict string
		if err := pool.QueryRow(ctx, "SELECT clients_check_ids($1, $2)", table, strings.Join(texts, ",")).Scan(&verdict); err != nil || verdict != "ok" {
			t.Fatalf("%s: %s %v", table, verdict, err)
		}
		out, _ := json.Marshal(Order{ID: one, V: "one"})
		if want := `{"id":"` + texts[0] + `","v":"one"}`; string(out) != want {
			t.Fatalf("JSON %s, want %s", out, want)
		}
	}
}

func TestTrapUnregisteredTypeCannotBeScanned(t *testing.T) {
	ctx := context.Background()
	newPool(t).Close()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var id int64
	err = conn.QueryRow(ctx, "INSERT INTO go_sf (v) VALUES ('raw') RETURNING id").Scan(&id)
	if err == nil || !strings.Contains(err.Error(), "cannot be scanned") {
		t.Fatalf("scanning a snowflake into an int64 without the recipe: %v, want \"unknown oid ... cannot be scanned\"", err)
	}
	out, _ := json.Marshal(struct{ ID int64 }{1<<60 + 1})
	if string(out) != `{"ID":1152921504606846977}` {
		t.Fatalf("without the string option encoding/json writes %s", out)
	}
}

func TestDatabaseSQLNeedsNothing(t *testing.T) {
	newPool(t).Close()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id int64
	var text string
	if err := db.QueryRow("INSERT INTO go_sf (v) VALUES ('sql') RETURNING id, id::text").Scan(&id, &text); err != nil || strconv.FormatInt(id, 10) != text {
		t.Fatalf("database/sql: %d, %q, %v", id, text, err)
	}
	var v string
	if err := db.QueryRow("SELECT v FROM go_sf WHERE id = $1", id).Scan(&v); err != nil || v != "sql" {
		t.Fatalf("database/sql lookup: %q, %v", v, err)
	}
}
