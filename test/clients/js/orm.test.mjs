// ORMs on node-postgres: Knex, Drizzle and Sequelize with snowflake and bigint keys. Each
// trap that turns an ID into a JavaScript Number is asserted (a Number above
// 2^53 is never a safe integer, so the ID may already be another one), and
// each recipe that keeps IDs exact is run: insert through the ORM, read back,
// a JSON.stringify round trip, and a lookup by the ID that came back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import knexFactory from 'knex';
import { drizzle } from 'drizzle-orm/node-postgres';
import { pgTable, bigint, text, customType } from 'drizzle-orm/pg-core';
import { sql, eq } from 'drizzle-orm';
import { Sequelize, DataTypes } from 'sequelize';

const NODE = BigInt(process.env.SNOWFLAKE_NODE ?? 7);
const nodeOf = (id) => (BigInt(id) >> 12n) & 1023n;
const url = `postgres://${process.env.PGUSER}@${process.env.PGHOST}:${process.env.PGPORT}/${process.env.PGDATABASE}`;
let pool;

// An exact ID: a decimal string of this server's node, which finds its row again after a JSON round trip.
async function assertExactAndFindable(id, table) {
  assert.equal(typeof id, 'string');
  assert.equal(nodeOf(id), NODE);
  const back = JSON.parse(JSON.stringify({ id })).id;
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE id = $1`, [back]);
  assert.equal(rows[0].n, 1);
}

before(async () => {
  pool = new pg.Pool({ max: 2 });
  await pool.query(`DROP TABLE IF EXISTS js_knex, js_drizzle, js_seq;
    CREATE TABLE js_knex (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(), v text);
    CREATE TABLE js_drizzle (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v text);
    CREATE TABLE js_seq (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(), v text)`);
});
after(() => pool.end());

test('Knex: specificType("snowflake") columns, IDs as strings', async () => {
  const db = knexFactory({ client: 'pg', connection: url });
  try {
    await db.schema.dropTableIfExists('js_knex_made');
    // The recipe: the key column as the snowflake type, defaulting to snowflake_nextval().
    await db.schema.createTable('js_knex_made', (t) => {
      t.specificType('id', 'snowflake').primary().defaultTo(db.raw('snowflake_nextval()'));
      t.text('v');
    });
    const [row] = await db('js_knex_made').insert({ v: 'a' }).returning('id');
    await assertExactAndFindable(row.id, 'js_knex_made');
    const found = await db('js_knex_made').where({ id: JSON.parse(JSON.stringify(row)).id }).first();
    assert.equal(found.v, 'a');
  } finally {
    await db.destroy();
  }
});

test('Drizzle trap: bigint({ mode: "number" }) rounds even the RETURNING value', async () => {
  const t = pgTable('js_drizzle', { id: bigint('id', { mode: 'number' }).primaryKey().default(sql`snowflake_nextval()`), v: text('v') });
  const db = drizzle(pool);
  const [row] = await db.insert(t).values({ v: 'number' }).returning({ id: t.id });
  assert.equal(typeof row.id, 'number');
  assert.equal(Number.isSafeInteger(row.id), false);
});

test('Drizzle trap: bigint({ mode: "bigint" }) is exact but JSON.stringify throws', async () => {
  const t = pgTable('js_drizzle', { id: bigint('id', { mode: 'bigint' }).primaryKey().default(sql`snowflake_nextval()`), v: text('v') });
  const db = drizzle(pool);
  const [row] = await db.insert(t).values({ v: 'bigint' }).returning({ id: t.id });
  assert.equal(typeof row.id, 'bigint');
  assert.throws(() => JSON.stringify(row), TypeError);
});

test('Drizzle recipe: a customType that keeps the ID a string', async () => {
  // The recipe: a column type whose values stay decimal strings both ways.
  const snowflakeId = customType({ dataType: () => 'bigint', fromDriver: (v) => String(v), toDriver: (v) => v });
  const t = pgTable('js_drizzle', { id: snowflakeId('id').primaryKey().default(sql`snowflake_nextval()`), v: text('v') });
  const db = drizzle(pool);
  const [row] = await db.insert(t).values({ v: 'custom' }).returning({ id: t.id });
  await assertExactAndFindable(row.id, 'js_drizzle');
  const [found] = await db.select().from(t).where(eq(t.id, JSON.parse(JSON.stringify(row)).id));
  assert.equal(found.v, 'custom');
});

test('Knex on a bigint key, Drizzle on a snowflake-typed key: the same recipes keep IDs exact', async () => {
  await pool.query(`DROP TABLE IF EXISTS js_knex_big, js_drizzle_sf;
    CREATE TABLE js_knex_big (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v text);
    CREATE TABLE js_drizzle_sf (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(), v text)`);
  const db = knexFactory({ client: 'pg', connection: url });
  try {
    const [row] = await db('js_knex_big').insert({ v: 'big' }).returning('id');
    await assertExactAndFindable(row.id, 'js_knex_big'); // node-postgres hands int8 over as a string
  } finally {
    await db.destroy();
  }
  const snowflakeKey = customType({ dataType: () => 'snowflake', fromDriver: (v) => String(v), toDriver: (v) => v });
  const t = pgTable('js_drizzle_sf', { id: snowflakeKey('id').primaryKey().default(sql`snowflake_nextval()`), v: text('v') });
  const dz = drizzle(pool);
  const [row] = await dz.insert(t).values({ v: 'sf' }).returning({ id: t.id });
  await assertExactAndFindable(row.id, 'js_drizzle_sf');
  const [found] = await dz.select().from(t).where(eq(t.id, JSON.parse(JSON.stringify(row)).id));
  assert.equal(found.v, 'sf');
});

test('Sequelize: type "snowflake" keys and max() are strings; trap: a BIGINT key\'s max() is a rounded Number', async () => {
  const seq = new Sequelize(url, { logging: false });
  try {
    // The recipe: the attribute's type is the snowflake type, its default snowflake_nextval().
    const Item = seq.define('Item', {
      id: { type: 'snowflake', primaryKey: true, defaultValue: Sequelize.literal('snowflake_nextval()') },
      v: DataTypes.TEXT,
    }, { tableName: 'js_seq', timestamps: false });
    const item = await Item.create({ v: 'a' });
    await assertExactAndFindable(item.id, 'js_seq');
    const found = await Item.findByPk(JSON.parse(JSON.stringify(item)).id);
    assert.equal(found.v, 'a');
    // With the snowflake type, max() stays an exact string too.
    const max = await Item.max('id');
    assert.equal(typeof max, 'string');
    assert.equal(nodeOf(max), NODE);
    // The trap: the same key declared DataTypes.BIGINT, whose max() Sequelize turns into a Number.
    const Plain = seq.define('Plain', {
      id: { type: DataTypes.BIGINT, primaryKey: true, defaultValue: Sequelize.literal('snowflake_nextval()') },
      v: DataTypes.TEXT,
    }, { tableName: 'js_seq', timestamps: false });
    const rounded = await Plain.max('id');
    assert.equal(typeof rounded, 'number');
    assert.equal(Number.isSafeInteger(rounded), false);
  } finally {
    await seq.close();
  }
});
