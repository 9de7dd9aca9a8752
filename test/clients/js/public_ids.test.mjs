// The JavaScript public-ID recipe (public_ids.mjs, @noble/ciphers' FF1) against the known-answer
// table and the server (connects as the superuser postgres, which may set snowflake.mask_keys):
// - every row of test/unit/mask_vectors.inc: mask, unmask, maskText and unmaskText;
// - against snowflake_mask(), snowflake_unmask(), snowflake_mask_text() and
//   snowflake_unmask_text() under the same key list: edge IDs, issued IDs and some thousands of
//   random ones with low bits set, both ways, byte for byte;
// - a rotation: text IDs made under key A still resolve, on both sides, under 'B:..., A:...',
//   while new ones name B; with A retired, both refuse them;
// - the same bad text IDs and out-of-range IDs refused by both (22P02, 22003 on the server).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { publicIds } from './public_ids.mjs';
const ids = publicIds('B:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f, A:2b7e151628aed2a6abf7158809cf4f3c');
const publicId = ids.maskText(1234567890123456789n); // 12 characters: the key's ID, 11 base62 digits
const id = ids.unmaskText(publicId); // 1234567890123456789n, under whichever listed key publicId names
const masked = ids.mask(id); // a bigint in [0, 2^63); ids.unmask(masked) gives id back
// (Above, the usage docs/public-ids.md quotes; checked against the server after the rotation below.)

const KEY_A = 'A:2b7e151628aed2a6abf7158809cf4f3c';
const KEY_B = 'B:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
let client;
let xs; // the IDs compared with the server

// Sets snowflake.mask_keys (resets it when keys is null) and waits until SHOW gives shown.
async function setKeys(keys, shown) {
  await client.query(keys === null ? 'ALTER SYSTEM RESET snowflake.mask_keys'
    : `ALTER SYSTEM SET snowflake.mask_keys = '${keys}'`);
  await client.query('SELECT pg_reload_conf()');
  for (let i = 0; shown !== null && i < 200; i++) {
    const { rows: [r] } = await client.query('SHOW snowflake.mask_keys');
    if (r['snowflake.mask_keys'] === shown) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (shown !== null) throw new Error(`the server never showed snowflake.mask_keys = '${shown}'`);
}

// One column of SELECT expr FROM unnest(values) WITH ORDINALITY, in order, as text.
async function column(expr, type, values) {
  const { rows } = await client.query(
    `SELECT (${expr})::text AS v FROM unnest($1::${type}[]) WITH ORDINALITY AS u(x, n) ORDER BY n`,
    [values.map(String)]);
  return rows.map((r) => r.v);
}

// The SQLSTATE of SELECT f($1), or 'none'.
async function sqlstate(f, arg) {
  try {
    await client.query(`SELECT ${f}($1)`, [arg]);
    return 'none';
  } catch (e) {
    return e.code;
  }
}

const random63 = () => randomBytes(8).readBigUInt64BE() >> 1n;

test('known answers: every row of test/unit/mask_vectors.inc', () => {
  const row = /^\{'(.)', "([0-9a-f]+)", (\d+), UINT64_C\((\d+)\), UINT64_C\((\d+)\), "(\w{12})"\},$/;
  const lines = readFileSync(new URL('../../unit/mask_vectors.inc', import.meta.url), 'utf8')
    .split('\n').filter((l) => l && !l.startsWith('//'));
  assert.ok(lines.length >= 60);
  for (const line of lines) {
    const [, keyId, hex, width, id, masked, text] = row.exec(line);
    const p = publicIds(`${keyId}:${hex}`, { width: Number(width) });
    assert.equal(p.mask(BigInt(id)), BigInt(masked), line);
    assert.equal(p.unmask(BigInt(masked)), BigInt(id), line);
    assert.equal(p.maskText(BigInt(id)), text, line);
    assert.equal(p.unmaskText(text), BigInt(id), line);
  }
});

describe('against the server', () => {
  before(async () => {
    client = new pg.Client({ user: 'postgres' });
    await client.connect();
    const { rows } = await client.query('SELECT snowflake_nextval()::text AS id FROM generate_series(1, 50)');
    xs = [0n, 1n, 2n, 1n << 31n, (1n << 62n) - 1n, 1n << 62n, (1n << 63n) - 2n, (1n << 63n) - 1n,
      ...rows.map((r) => BigInt(r.id))];
    for (let i = 0; i < 2000; i++) xs.push(random63());
    for (let i = 0; i < 1000; i++) xs.push(random63() | 0xfffn); // a full sequence field
  });
  after(async () => {
    await setKeys(null, null);
    await client.end();
  });

  test('the same IDs both ways, byte for byte, then a rotation, then a retired key', async () => {
    await setKeys(KEY_A, 'A:(hidden)');
    const a = publicIds(KEY_A);
    const masks = await column('snowflake_mask(x)', 'bigint', xs);
    const texts = await column('snowflake_mask_text(x)', 'bigint', xs);
    assert.deepEqual(masks, xs.map((x) => String(a.mask(x))));
    assert.deepEqual(texts, xs.map((x) => a.maskText(x)));
    assert.deepEqual(masks.map((m) => a.unmask(BigInt(m))), xs);
    assert.deepEqual(texts.map((t) => a.unmaskText(t)), xs);
    // The server reads the client's masks and text IDs back; unmask of values no mask came from.
    assert.deepEqual(await column('snowflake_unmask(x)', 'bigint', xs.map((x) => a.mask(x))), xs.map(String));
    assert.deepEqual(await column('snowflake_unmask_text(x)', 'text', xs.map((x) => a.maskText(x))), xs.map(String));
    assert.deepEqual(await column('snowflake_unmask(x)', 'bigint', xs), xs.map((x) => String(a.unmask(x))));

    // Rotation: B masks now; A's text IDs keep resolving while A stays listed.
    await setKeys(`${KEY_B}, ${KEY_A}`, 'B:(hidden), A:(hidden)');
    const ba = publicIds(`${KEY_B}, ${KEY_A}`);
    const newTexts = await column('snowflake_mask_text(x)', 'bigint', xs);
    assert.deepEqual(newTexts, xs.map((x) => ba.maskText(x)));
    assert.ok(newTexts.every((t) => t[0] === 'B'));
    assert.deepEqual(await column('snowflake_mask(x)', 'bigint', xs), xs.map((x) => String(ba.mask(x))));
    assert.deepEqual(await column('snowflake_unmask_text(x)', 'text', texts), xs.map(String));
    assert.deepEqual(texts.map((t) => ba.unmaskText(t)), xs);
  // The usage above, under this same key list.
  assert.deepEqual(await column('snowflake_mask_text(x)', 'bigint', [1234567890123456789n]), [publicId]);
  assert.deepEqual(await column('snowflake_mask(x)', 'bigint', [id]), [String(masked)]);
  assert.equal(id, 1234567890123456789n);
  assert.equal(ids.unmask(masked), id);

    // A retired: both refuse the text IDs made under it.
    await setKeys(KEY_B, 'B:(hidden)');
    const b = publicIds(KEY_B);
    assert.equal(await sqlstate('snowflake_unmask_text', texts[0]), '22P02');
    assert.throws(() => b.unmaskText(texts[0]));
    assert.equal((await column('snowflake_unmask_text(x)', 'text', [newTexts[0]]))[0], String(xs[0]));
  });

  test('bad text IDs and IDs out of range: refused by both', async () => {
    await setKeys(KEY_B, 'B:(hidden)');
    const b = publicIds(KEY_B);
    const bad = ['', 'B', 'B0000000000', 'B00000000000A', 'B0000000000-', 'B0000000000 ', 'Bzzzzzzzzzzz',
      'BAzL8n0Y58m8' /* 2^63 */, 'C00000000000' /* no such key */];
    for (const t of bad) {
      assert.equal(await sqlstate('snowflake_unmask_text', t), '22P02', t);
      assert.throws(() => b.unmaskText(t), t);
    }
    // 2^63 - 1, the largest value a text ID holds, read alike.
    assert.deepEqual(await column('snowflake_unmask_text(x)', 'text', ['BAzL8n0Y58m7']), [String(b.unmaskText('BAzL8n0Y58m7'))]);
    for (const f of ['snowflake_mask', 'snowflake_unmask', 'snowflake_mask_text']) {
      assert.equal(await sqlstate(f, '-1'), '22003', f);
    }
    assert.throws(() => b.mask(-1n), RangeError);
    assert.throws(() => b.unmask(-1n), RangeError);
    assert.throws(() => b.mask(1n << 63n), RangeError);
  });
});

// The js53 layout (run.sh's second server, its key list in postgresql.conf): masks stay below 2^53,
// exact as a JavaScript Number, and equal the client's with width 53.
describe('against a js53 server', { skip: !process.env.CLIENTS_JS53_PORT && 'CLIENTS_JS53_PORT is not set' }, () => {
  const KEY_J = 'J:2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f';
  let js53;
  before(async () => {
    js53 = new pg.Client({ user: 'postgres', port: Number(process.env.CLIENTS_JS53_PORT) });
    await js53.connect();
  });
  after(() => js53.end());

  test('issued, edge and random IDs below 2^53: the same masks and text IDs both ways', async () => {
    const { rows } = await js53.query('SELECT snowflake_nextval()::text AS id FROM generate_series(1, 50)');
    const xs = [0n, 1n, 2n, (1n << 52n) - 1n, 1n << 52n, (1n << 53n) - 2n, (1n << 53n) - 1n, ...rows.map((r) => BigInt(r.id))];
    for (let i = 0; i < 2000; i++) xs.push(randomBytes(8).readBigUInt64BE() >> 11n);
    const j = publicIds(KEY_J, { width: 53 });
    const query = async (expr, type, values) => (await js53.query(
      `SELECT (${expr})::text AS v FROM unnest($1::${type}[]) WITH ORDINALITY AS u(x, n) ORDER BY n`,
      [values.map(String)])).rows.map((r) => r.v);
    const masks = await query('snowflake_mask(x)', 'bigint', xs);
    assert.deepEqual(masks, xs.map((x) => String(j.mask(x))));
    assert.ok(masks.every((m) => Number.isSafeInteger(Number(m))));
    assert.deepEqual(await query('snowflake_mask_text(x)', 'bigint', xs), xs.map((x) => j.maskText(x)));
    assert.deepEqual(await query('snowflake_unmask(x)', 'bigint', xs), xs.map((x) => String(j.unmask(x))));
    assert.deepEqual(await query('snowflake_unmask_text(x)', 'text', xs.map((x) => j.maskText(x))), xs.map(String));
    // 2^53 is no js53 ID, nor a js53 mask; as text, it is no public ID of this layout.
    for (const f of ['snowflake_mask', 'snowflake_unmask']) {
      await assert.rejects(js53.query(`SELECT ${f}($1)`, [String(1n << 53n)]), { code: '22003' }, f);
    }
    assert.throws(() => j.mask(1n << 53n), RangeError);
    await assert.rejects(js53.query('SELECT snowflake_unmask_text($1)', ['J00fFgnDxSe8']), { code: '22P02' }); // 2^53
    assert.throws(() => j.unmaskText('J00fFgnDxSe8'), SyntaxError);
    assert.equal(j.unmaskText('J00fFgnDxSe7') < 1n << 53n, true); // 2^53 - 1 reads
  });
});
