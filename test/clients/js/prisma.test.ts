// Prisma 7 with the pg driver adapter and snowflake keys, on the client that
// run.sh generates offline from prisma/schema.prisma: rows created singly and
// with createManyAndReturn() into a bigint-keyed and a snowflake-keyed table
// (test/clients/setup.sql's clients_make_tables), every returned ID equal to
// the table's id::text (with IDs a double cannot hold among them), rows read
// back by ID, and JSON: JSON.stringify throws on the BigInt key, the replacer
// below writes it as a string. The schema's defaults are the tables' own; the
// schema itself is checked with prisma validate and prisma format --check
// (run.sh), since migrate and db pull need Prisma's native schema engine,
// which is not on npm.
import { readFileSync } from 'node:fs';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client.ts';

const NODE = BigInt(process.env.SNOWFLAKE_NODE ?? 7);
const url = `postgres://${process.env.PGUSER}@${process.env.PGHOST}:${process.env.PGPORT}/${process.env.PGDATABASE}`;
let pool: pg.Pool;
let prisma: PrismaClient;

// JSON with every BigInt (a snowflake ID) written as a decimal string.
const toJSON = (value: unknown) => JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? v.toString() : v));

before(async () => {
  pool = new pg.Pool({ connectionString: url, max: 1 });
  await pool.query("SELECT clients_make_tables('prisma')");
  prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url }) });
});
after(async () => {
  await prisma.$disconnect();
  await pool.end();
});

for (const [model, table] of [['order', 'prisma_big'], ['post', 'prisma_sf']] as const) {
  test(`Prisma: ${table}: create and createManyAndReturn give the table's IDs as BigInt`, async () => {
    const delegate = prisma[model] as typeof prisma.order;
    const one = await delegate.create({ data: { v: 'one' } });
    const bulk = await delegate.createManyAndReturn({ data: Array.from({ length: 300 }, (_, n) => ({ v: `b${n}` })) });
    const ids = [one.id, ...bulk.map((r) => r.id)];
    assert.ok(ids.every((id) => typeof id === 'bigint' && ((id >> 12n) & 1023n) === NODE));
    const { rows } = await pool.query('SELECT clients_check_ids($1, $2) AS verdict', [table, ids.join(',')]);
    assert.equal(rows[0].verdict, 'ok');
    for (const id of ids) assert.equal((await delegate.findUnique({ where: { id } }))?.id, id);
    // JSON: the BigInt key makes JSON.stringify throw; the replacer writes it as a string.
    assert.throws(() => JSON.stringify(one), TypeError);
    const back = JSON.parse(toJSON(one));
    assert.equal(back.id, String(one.id));
    assert.equal((await delegate.findUnique({ where: { id: BigInt(back.id) } }))?.v, 'one');
  });
}

test('Prisma: each dbgenerated() default of the schema is the default of its table', async () => {
  const schema = readFileSync(new URL('prisma/schema.prisma', import.meta.url), 'utf8');
  const models = [...schema.matchAll(/@default\(dbgenerated\("([^"]+)"\)\)[\s\S]*?@@map\("(\w+)"\)/g)];
  assert.equal(models.length, 2);
  for (const [, expression, table] of models) {
    const { rows } = await pool.query(
      "SELECT column_default FROM information_schema.columns WHERE table_name = $1 AND column_name = 'id'", [table]);
    assert.equal(rows[0].column_default, expression);
  }
});
