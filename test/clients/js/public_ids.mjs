// Public IDs in the app (issue 35): the same keyed, reversible mask as the SQL functions
// snowflake_mask(), snowflake_unmask(), snowflake_mask_text() and snowflake_unmask_text(), with
// the same key list as the setting snowflake.mask_keys, on @noble/ciphers' FF1 (NIST SP 800-38G).
// The construction: FF1 over AES, radix 2, empty tweak, on the ID's w bits (63; 53 under the js53
// layout), most significant bit first; the text form is the key's one-character ID, then the
// masked value as 11 base62 digits (0-9A-Za-z). IDs are BigInts: a double cannot hold them.
// Tested byte for byte against the server by publicids.test.mjs (test/clients/run.sh js).
import { FF1 } from '@noble/ciphers/ff1.js';

const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Reads a key list written as snowflake.mask_keys is: 'B:<hex>, A:<hex>', the first key masks.
function parseKeys(list) {
  const keys = new Map();
  for (const entry of list.split(',').map((e) => e.trim())) {
    const m = /^([0-9A-Za-z]):((?:[0-9A-Fa-f]{2}){16}|(?:[0-9A-Fa-f]{2}){24}|(?:[0-9A-Fa-f]{2}){32})$/.exec(entry);
    if (!m || keys.has(m[1])) throw new Error('malformed or repeated key entry in the key list');
    keys.set(m[1], FF1(2, Uint8Array.from(m[2].match(/../g), (h) => parseInt(h, 16))));
  }
  return keys;
}

// publicIds('B:000102...0f, A:2b7e...3c', { width: 63 }) -> { mask, unmask, maskText, unmaskText }.
export function publicIds(keyList, { width = 63 } = {}) {
  if (width !== 63 && width !== 53) throw new RangeError('width must be 63 (twitter, sonyflake) or 53 (js53)');
  const keys = parseKeys(keyList);
  const [firstId, first] = keys.entries().next().value;
  const w = BigInt(width);
  const inRange = (x) => {
    if (typeof x !== 'bigint' || x < 0n || x >> w !== 0n) throw new RangeError(`ID out of range: ${x}`);
    return x;
  };
  // x as w binary digits, most significant first, and back.
  const bits = (x) => Array.from({ length: width }, (_, i) => Number((x >> (w - 1n - BigInt(i))) & 1n));
  const value = (digits) => digits.reduce((acc, d) => (acc << 1n) | BigInt(d), 0n);

  const mask = (id) => value(first.encrypt(bits(inRange(id))));
  const unmask = (masked) => value(first.decrypt(bits(inRange(masked))));
  const maskText = (id) => {
    let m = mask(id);
    let text = '';
    for (let i = 0; i < 11; i++, m /= 62n) text = DIGITS[Number(m % 62n)] + text;
    return firstId + text;
  };
  const unmaskText = (text) => {
    const bad = () => new SyntaxError(`invalid public ID: "${text}"`);
    if (typeof text !== 'string' || text.length !== 12) throw bad();
    const key = keys.get(text[0]);
    if (!key) throw new Error(`public ID "${text}" names key "${text[0]}", which the key list does not hold`);
    let m = 0n;
    for (const c of text.slice(1)) {
      const d = DIGITS.indexOf(c);
      if (d < 0) throw bad();
      m = m * 62n + BigInt(d);
    }
    if (m >> w !== 0n) throw bad();
    return value(key.decrypt(bits(m)));
  };
  return { mask, unmask, maskText, unmaskText };
}
