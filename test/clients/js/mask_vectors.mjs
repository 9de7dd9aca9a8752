// Writes the known-answer table of public IDs, test/unit/mask_vectors.inc, from the JavaScript
// recipe (public_ids.mjs, on @noble/ciphers' FF1): three AES keys (the 128-, 192- and 256-bit keys
// of NIST's FF1 samples) by the two widths (63, and 53 for js53), edge IDs and IDs with low bits
// set. Bouncy Castle checks every row (java/PublicIdsCheck.java), and so does public_ids.test.mjs.
// Usage, from test/clients/js after npm ci: node mask_vectors.mjs > ../../unit/mask_vectors.inc
import { publicIds } from './public_ids.mjs';

const KEYS = [
  ['A', '2b7e151628aed2a6abf7158809cf4f3c'],
  ['m', '2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f'],
  ['7', '2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f7f036d6f04fc6a94'],
];
const twitter = (ms, node, seq) => (ms << 22n) | (node << 12n) | seq;
const IDS = {
  63: [0n, 1n, 2n, 3n, 1n << 31n, (1n << 32n) - 1n, (1n << 62n) - 1n, 1n << 62n, (1n << 62n) + 1n,
    (1n << 63n) - 2n, (1n << 63n) - 1n, 0x5555555555555555n & ((1n << 63n) - 1n), 0x2aaaaaaaaaaaaaaan,
    twitter(1234567890123n, 7n, 4095n), twitter(69801234567n, 1023n, 1n)],
  53: [0n, 1n, 2n, (1n << 52n) - 1n, 1n << 52n, (1n << 53n) - 2n, (1n << 53n) - 1n, 0x15555555555555n,
    9007199254740881n],
};

console.log(`// Known answers for public IDs (issue 35): FF1 (NIST SP 800-38G) over AES,
// radix 2, empty tweak, on the ID's w bits most significant first; the text form is the key's ID
// and 11 base62 digits (0-9A-Za-z). Made by test/clients/js/mask_vectors.mjs (@noble/ciphers 2.4.0)
// and checked row by row with Bouncy Castle 1.72 (test/clients/java/PublicIdsCheck.java).
// One row a line, for an array of
//   struct { char key_id; const char *key_hex; int width; uint64_t id; uint64_t masked; const char *text; }
// where masked = FF1-encrypt(key, id) and text = key_id + base62(masked) under the key list "key_id:key_hex".`);
for (const [keyId, hex] of KEYS) {
  for (const width of [63, 53]) {
    const p = publicIds(`${keyId}:${hex}`, { width });
    for (const id of IDS[width]) {
      console.log(`{'${keyId}', "${hex}", ${width}, UINT64_C(${id}), UINT64_C(${p.mask(id)}), "${p.maskText(id)}"},`);
    }
  }
}
