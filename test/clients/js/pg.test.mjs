// node-postgres: bigint arrives as a string (safe); the traps that round an ID
// to a Number (parseInt8, json_agg, Number(id)) and the recipe that makes the
// snowflake type and its array arrive as strings too.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';

const NODE = BigInt(process.env.SNOWFLAKE_NODE ?? 7);
const nodeOf = (id) => (BigInt(id) >> 12n) & 1023n;
let client;

// The recipe docs/clients.md quotes: snowflake and snowflake[] parse like bigint (as strings).
export async function registerSnowflake(c) {
  const { rows } = await c.query(
    "SELECT t.oid, t.typarray FROM pg_type t WHERE t.oid = 'snowflake'::regtype");
  const types = new pg.TypeOverrides();
  types.setTypeParser(rows[0].oid, 'text', (v) => v);
  types.setTypeParser(rows[0].typarray, 'text', pg.types.getTypeParser(1016, 'text')); // int8[]
  return types;
}

before(async () => {
  client = new pg.Client();
  await client.connect();
  await client.query(`DROP TABLE IF EXISTS js_pg;
    CREATE TABLE js_pg (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), s snowflake DEFAULT snowflake_nextval(), v text)`);
});
after(() => client.end());

test('bigint arrives as a string: exact, JSON-safe, usable for lookup', async () => {
  const { rows: [r] } = await client.query("INSERT INTO js_pg (v) VALUES ('a') RETURNING id");
  assert.equal(typeof r.id, 'string');
  assert.equal(nodeOf(r.id), NODE);
  const back = JSON.parse(JSON.stringify(r));
  const { rows } = await client.query('SELECT v FROM js_pg WHERE id = $1', [back.id]);
  assert.equal(rows[0].v, 'a');
});

test('trap: an ID past 2^53 is not a safe Number and Number(id) rounds it', async () => {
  const { rows } = await client.query("INSERT INTO js_pg (v) SELECT 'b' FROM generate_series(1, 50) RETURNING id");
  assert.ok(rows.every((r) => BigInt(r.id) > BigInt(Number.MAX_SAFE_INTEGER)));
  assert.ok(rows.some((r) => BigInt(Number(r.id)) !== BigInt(r.id)));
});

test('trap: json_agg / json_build_object of a bigint is parsed by JSON.parse and rounds', async () => {
  const { rows: [r] } = await client.query(
    "SELECT id::text AS exact, json_build_object('id', id) AS j FROM snowflake_nextval_block(4) b, generate_series(lower(b), upper(b) - 1) id WHERE id % 2 = 1 LIMIT 1");
  assert.equal(typeof r.j.id, 'number');
  assert.notEqual(String(BigInt(r.j.id)), r.exact);
  const { rows: [a] } = await client.query(
    "SELECT json_agg(id) AS j, json_agg(id::text) AS fixed, array_agg(id::text) AS exact FROM snowflake_nextval_block(4) b, generate_series(lower(b), upper(b) - 1) id WHERE id % 2 = 1");
  assert.ok(a.j.every((n) => typeof n === 'number'));
  assert.ok(a.j.some((n, i) => String(BigInt(n)) !== a.exact[i]));
  assert.deepEqual(a.fixed, a.exact); // fix: aggregate the text
  const { rows: [f] } = await client.query(
    "SELECT id::text AS exact, json_build_object('id', id::text) AS j FROM js_pg LIMIT 1");
  assert.equal(f.j.id, f.exact); // fix: cast to text inside the JSON
});

test('trap: pg.defaults.parseInt8 = true rounds every bigint', async () => {
  pg.defaults.parseInt8 = true; // global: affects clients connected from now on
  const c = new pg.Client();
  await c.connect();
  try {
    const { rows: [r] } = await c.query('SELECT id, id::text AS exact FROM snowflake_nextval_block(4) b, generate_series(lower(b), upper(b) - 1) id WHERE id % 2 = 1 LIMIT 1');
    assert.equal(typeof r.id, 'number');
    assert.notEqual(String(BigInt(r.id)), r.exact);
  } finally { pg.defaults.parseInt8 = false; await c.end(); }
});

test('trap: a rounded ID is ANOTHER ROW\'s ID in a densely loaded table', async () => {
  await client.query(`DROP TABLE IF EXISTS js_dense;
    CREATE TABLE js_dense AS SELECT g AS id, g::text AS exact
      FROM snowflake_nextval_block(1000) b, generate_series(lower(b), upper(b) - 1) g;
    ALTER TABLE js_dense ADD PRIMARY KEY (id)`);
  const { rows } = await client.query('SELECT id FROM js_dense');
  let other = 0;
  for (const { id } of rows) {
    const { rows: hit } = await client.query('SELECT exact FROM js_dense WHERE id = $1', [Number(id)]);
    if (hit.length === 1 && hit[0].exact !== id) other++;
  }
  assert.ok(other > 0, 'no lookup by Number(id) found another row');
});

test('snowflake type: unknown OID arrives as a string; the recipe also parses snowflake[]', async () => {
  const { rows: [raw] } = await client.query('SELECT s, array_agg(s) OVER () AS arr FROM js_pg LIMIT 1');
  assert.equal(typeof raw.s, 'string');
  assert.equal(typeof raw.arr, 'string'); // '{...}': not an array without the recipe
  const c = new pg.Client();
  await c.connect();
  try {
    const types = await registerSnowflake(c);
    const { rows: [r] } = await c.query({ text: 'SELECT s, array_agg(s) OVER () AS arr FROM js_pg LIMIT 1', types });
    assert.equal(typeof r.s, 'string');
    assert.ok(Array.isArray(r.arr) && r.arr.includes(r.s));
    assert.equal(nodeOf(r.s), NODE);
  } finally { await c.end(); }
});

test('int8range from snowflake_nextval_block arrives as the string "[a,b)": select lower/upper', async () => {
  const { rows: [r] } = await client.query('SELECT snowflake_nextval_block(10) AS b');
  assert.equal(typeof r.b, 'string');
  assert.match(r.b, /^\[\d+,\d+\)$/);
  const { rows: [x] } = await client.query(
    'SELECT lower(b) AS first, upper(b) AS after_last FROM snowflake_nextval_block(10) b');
  assert.equal(BigInt(x.after_last) - BigInt(x.first), 10n);
});
