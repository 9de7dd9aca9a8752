// MikroORM 6 (7 needs Node 22) on PostgreSQL with snowflake keys, in a
// database of its own (from template1, which has the extension) so that its
// schema diff sees only these entities: a snowflake-typed key and a bigint
// key, each autoincrement: false with defaultRaw snowflake_nextval(); tables
// made by createSchema(), rows persisted singly and 300 in one flush, every
// ID equal to the table's id::text (with IDs a double cannot hold among them),
// rows read back by ID, toJSON() with the IDs as strings, and the schema diff:
// empty for the snowflake-typed key; for the bigint key MikroORM reads any
// default containing "nextval" as autoincrement and always plans an ALTER
// TYPE, but updateSchema() keeps the default. The traps: a naive bigint key
// becomes bigserial, and after snowflake_convert_column() its updateSchema()
// drops the default. MikroORM's schema tools read every schema the role may
// see: the recipe's ignoreSchema keeps the extension's own schema out, and the
// trap without it is a diff that drops the node check's table.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { MikroORM, EntitySchema, BigIntType, wrap } from '@mikro-orm/postgresql';

const NODE = BigInt(process.env.SNOWFLAKE_NODE ?? 7);
const DB = 'clients_mikroorm';
const clientUrl = `postgres://${process.env.PGUSER}@${process.env.PGHOST}:${process.env.PGPORT}/${DB}`;

interface Item { id: string; v?: string }

// The recipe: the key as the snowflake type, read as a string, filled by the database.
const Post = new EntitySchema<Item>({
  name: 'Post',
  tableName: 'mikro_sf',
  properties: {
    id: { type: new BigIntType('string'), columnType: 'snowflake', primary: true, autoincrement: false, defaultRaw: 'snowflake_nextval()' },
    v: { type: 'text', nullable: true },
  },
});

// The same on a bigint key.
const Order = new EntitySchema<Item>({
  name: 'Order',
  tableName: 'mikro_big',
  properties: {
    id: { type: new BigIntType('string'), primary: true, autoincrement: false, defaultRaw: 'snowflake_nextval()' },
    v: { type: 'text', nullable: true },
  },
});

// The naive key a new user writes first: MikroORM makes it bigserial.
const Naive = new EntitySchema<Item>({
  name: 'Naive',
  tableName: 'mikro_naive',
  properties: { id: { type: 'bigint', primary: true }, v: { type: 'text', nullable: true } },
});

// The recipe's options: the schema tools leave the extension's own schema alone.
const schemaGenerator = { ignoreSchema: ['snowflake_node_check'] };

let admin: pg.Pool;
let db: pg.Pool;
let orm: MikroORM;

// The key column's type and default as the database has them.
async function key(table: string) {
  const { rows } = await db.query(
    "SELECT udt_name || ' ' || coalesce(column_default, 'no default') AS k FROM information_schema.columns WHERE table_name = $1 AND column_name = 'id'",
    [table]);
  return rows[0].k;
}

before(async () => {
  admin = new pg.Pool({ max: 1 });
  await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
  await admin.query(`CREATE DATABASE ${DB}`);
  db = new pg.Pool({ connectionString: clientUrl, max: 1 });
  orm = await MikroORM.init({ entities: [Post, Order], clientUrl, schemaGenerator });
  await orm.schema.createSchema();
});
after(async () => {
  await orm.close();
  await db.end();
  await admin.end();
});

for (const [entity, table] of [[Post, 'mikro_sf'], [Order, 'mikro_big']] as const) {
  test(`MikroORM: ${table}: persisted rows get the table's IDs as strings`, async () => {
    const em = orm.em.fork();
    const one = em.create(entity, { v: 'one' });
    await em.flush();
    const bulk = Array.from({ length: 300 }, (_, n) => em.create(entity, { v: `b${n}` }));
    await em.flush();
    const ids = [one.id, ...bulk.map((r) => r.id)];
    assert.ok(ids.every((id) => typeof id === 'string' && ((BigInt(id) >> 12n) & 1023n) === NODE));
    const { rows } = await db.query('SELECT clients_check_ids($1, $2) AS verdict', [table, ids.join(',')]);
    assert.equal(rows[0].verdict, 'ok');
    const reader = orm.em.fork();
    for (const id of ids) assert.equal((await reader.findOneOrFail(entity, { id })).id, id);
    assert.equal(JSON.parse(JSON.stringify(wrap(one).toJSON())).id, one.id);
  });
}

test('MikroORM: the schema diff keeps the defaults; only the snowflake-typed key has an empty one', async () => {
  assert.equal(await key('mikro_sf'), 'snowflake snowflake_nextval()');
  assert.equal(await key('mikro_big'), 'int8 snowflake_nextval()');
  const sf = await MikroORM.init({ entities: [Post], clientUrl, schemaGenerator });
  try {
    assert.equal((await sf.schema.getUpdateSchemaSQL({ wrap: false, safe: true })).trim(), '');
  } finally {
    await sf.close();
  }
  const diff = await orm.schema.getUpdateSchemaSQL({ wrap: false });
  assert.match(diff, /alter table "mikro_big" alter column "id" type bigint/);
  assert.doesNotMatch(diff, /default/);
  await orm.schema.updateSchema();
  assert.equal(await key('mikro_big'), 'int8 snowflake_nextval()');
});

test('MikroORM trap: a naive bigint key is bigserial, and after conversion updateSchema() drops the default', async () => {
  const naive = await MikroORM.init({ entities: [Naive], clientUrl, schemaGenerator });
  try {
    assert.match(await naive.schema.getCreateSchemaSQL({ wrap: false }), /"id" bigserial/);
    await naive.schema.execute('create table "mikro_naive" ("id" bigserial primary key, "v" text null)');
    await naive.schema.execute("select snowflake_convert_column('mikro_naive', 'id')");
    assert.equal(await key('mikro_naive'), 'int8 snowflake_nextval()');
    await naive.schema.updateSchema({ safe: true });
    assert.equal(await key('mikro_naive'), 'int8 no default');
  } finally {
    await naive.close();
  }
});

test('MikroORM trap: without ignoreSchema, a superuser\'s diff drops the node check\'s table', async () => {
  const bare = await MikroORM.init({ entities: [Post, Order], clientUrl });
  try {
    assert.match(await bare.schema.getUpdateSchemaSQL({ wrap: false }), /drop table if exists "snowflake_node_check"\."claims"/);
    assert.doesNotMatch(await orm.schema.getUpdateSchemaSQL({ wrap: false }), /snowflake_node_check/);
  } finally {
    await bare.close();
  }
});
