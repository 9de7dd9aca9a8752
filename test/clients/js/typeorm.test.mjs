// TypeORM 0.3 with snowflake keys: two traps, no recipe for the snowflake type.
// It refuses a column of type 'snowflake' outright, and for a bigint entity
// column on a snowflake-typed table its schema synchronization plans to drop
// and re-add the key column (and with it every key value). Declare such keys
// as 'bigint' on bigint columns, and never run synchronize against them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { DataSource, EntitySchema } from 'typeorm';

let pool;
const connection = () => ({ type: 'postgres', host: process.env.PGHOST, port: Number(process.env.PGPORT),
  username: process.env.PGUSER, database: process.env.PGDATABASE });
const schema = (type) => new EntitySchema({ name: 'TypeormItem', tableName: 'js_typeorm',
  columns: { id: { type, primary: true }, v: { type: 'text', nullable: true } } });

before(async () => {
  pool = new pg.Pool({ max: 1 });
  await pool.query(`DROP TABLE IF EXISTS js_typeorm;
    CREATE TABLE js_typeorm (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(), v text)`);
});
after(() => pool.end());

test('TypeORM trap: the snowflake column type is refused', async () => {
  const ds = new DataSource({ ...connection(), entities: [schema('snowflake')] });
  await assert.rejects(ds.initialize(), /snowflake/);
  if (ds.isInitialized) await ds.destroy();
});

test('TypeORM trap: synchronize would drop and re-add a snowflake-typed key declared bigint', async () => {
  const ds = new DataSource({ ...connection(), entities: [schema('bigint')] });
  await ds.initialize();
  try {
    const plan = await ds.driver.createSchemaBuilder().log();
    const up = plan.upQueries.map((q) => q.query).join('\n');
    assert.match(up, /DROP COLUMN "id"/);
    assert.match(up, /ADD "id"/);
  } finally {
    await ds.destroy();
  }
});
