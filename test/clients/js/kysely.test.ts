// Kysely 0.28 on node-postgres with snowflake keys: tables made by Kysely's
// schema builder (a bigint key and a snowflake-typed key, each DEFAULT
// snowflake_nextval()), rows inserted singly and in bulk with returning('id'),
// every returned ID equal to the table's id::text (with IDs a double cannot
// hold among them), rows read back by ID, and a JSON round trip. The trap:
// insertId is undefined on PostgreSQL, so the ID must come from returning().
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { Kysely, PostgresDialect, sql, type Generated } from 'kysely';

const NODE = BigInt(process.env.SNOWFLAKE_NODE ?? 7);

// The tables as Kysely sees them: node-postgres hands both key types over as decimal strings.
interface Database {
  kysely_big: { id: Generated<string>; v: string | null };
  kysely_sf: { id: Generated<string>; v: string | null };
}

let db: Kysely<Database>;

before(async () => {
  db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ max: 2 }) }) });
  await db.schema.dropTable('kysely_big').ifExists().execute();
  await db.schema.dropTable('kysely_sf').ifExists().execute();
  await db.schema.createTable('kysely_big')
    .addColumn('id', 'bigint', (c) => c.primaryKey().defaultTo(sql`snowflake_nextval()`))
    .addColumn('v', 'text')
    .execute();
  await db.schema.createTable('kysely_sf')
    .addColumn('id', sql`snowflake`, (c) => c.primaryKey().defaultTo(sql`snowflake_nextval()`))
    .addColumn('v', 'text')
    .execute();
});
after(() => db.destroy());

for (const table of ['kysely_big', 'kysely_sf'] as const) {
  test(`Kysely: ${table}: returning('id') gives the table's IDs as strings`, async () => {
    const one = await db.insertInto(table).values({ v: 'one' }).returning('id').executeTakeFirstOrThrow();
    const bulk = await db.insertInto(table)
      .values(Array.from({ length: 300 }, (_, n) => ({ v: `b${n}` })))
      .returning('id')
      .execute();
    const ids = [one.id, ...bulk.map((r) => r.id)];
    assert.ok(ids.every((id) => typeof id === 'string' && ((BigInt(id) >> 12n) & 1023n) === NODE));
    const { rows: [check] } = await sql<{ verdict: string }>`SELECT clients_check_ids(${table}, ${ids.join(',')}) AS verdict`.execute(db);
    assert.equal(check.verdict, 'ok');
    for (const id of ids) {
      const row = await db.selectFrom(table).select('id').where('id', '=', id).executeTakeFirst();
      assert.equal(row?.id, id);
    }
    const back = JSON.parse(JSON.stringify(one));
    assert.equal((await db.selectFrom(table).select('v').where('id', '=', back.id).executeTakeFirstOrThrow()).v, 'one');
    const { rows: [column] } = await sql<{ d: string }>`SELECT column_default AS d FROM information_schema.columns
      WHERE table_name = ${table} AND column_name = 'id'`.execute(db);
    assert.equal(column.d, 'snowflake_nextval()');
  });
}

test('Kysely trap: insertId is undefined on PostgreSQL', async () => {
  const result = await db.insertInto('kysely_big').values({ v: 'no id' }).executeTakeFirst();
  assert.equal(result.insertId, undefined);
  assert.equal(result.numInsertedOrUpdatedRows, 1n);
});
