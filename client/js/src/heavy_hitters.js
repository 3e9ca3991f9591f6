// Heavy hitters over an open dictionary on the device: the `heavy_hitters` kind's randomizer
// (common/include/deniable/common/heavy_hitters.h; docs/statistics.md section 11), held to the C++
// one by tests/golden/heavy_hitters_vectors.json. A value is a byte string (a string is sent as
// its UTF-8 bytes) of at most maxLength bytes with no NUL byte.
//
// 1. drawGroup(): once per device and metric (the Reporter keeps it in its store):
//    bernoulli(holdoutShare) gives group 0 (estimation), else 1 + below(L), L = maxLength + 1.
// 2. prefixOf(): group 0 and groups > the value's length carry the value and one NUL byte (the
//    whole value), group g <= the length its first g bytes.
// 3. sketchHash(): h_{group,row}(prefix) in [0, width): FNV-1a 64 over the salt's 8 bytes (little
//    endian), the group and the row as one byte each and the prefix; splitmix64's finalizer;
//    masked to the width.
// 4. randomizeHeavyHitter(): row = below(rows), coefficient = below(width), keep =
//    bernoulli(e^eps / (1 + e^eps)); the true entry is 1 when popcount(cell & coefficient) is
//    even, and the bit is it when kept, flipped otherwise.
// Group, row and coefficient do not depend on the value: one report is eps-LDP.
import { DeniableError } from './errors.js';

const MASK64 = (1n << 64n) - 1n;
const FNV_OFFSET = 14695981039346656037n;
const FNV_PRIME = 1099511628211n;
// As categorical.js: a served (a, b) must match the design's bit channel to this tolerance.
const CHANNEL_TOLERANCE = 1e-12;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const invalid = (message) => new DeniableError('INVALID_ARGUMENT', message);

/**
 * A checked design (ValidateHeavyHittersDesign's limits). salt: a uint64 as a BigInt, a decimal
 * string (the JSON mapping of fixed64) or a safe integer. Throws INVALID_ARGUMENT naming
 * "<field>.epsilon", ".maxLength", ".rows", ".width", ".holdoutShare" or ".salt".
 */
export function makeHeavyHittersDesign({
  epsilon = Math.log(3), maxLength = 32, rows = 16, width = 1024, holdoutShare = 0.25, salt = 0n,
} = {}, field = 'design.parameters.heavyHitters') {
  if (!(epsilon > 0 && epsilon <= 20)) throw invalid(`${field}.epsilon: must be in (0, 20] nats, but is ${epsilon}`);
  if (!(Number.isInteger(maxLength) && maxLength >= 1 && maxLength <= 64)) {
    throw invalid(`${field}.maxLength: must be in [1, 64] bytes, but is ${maxLength}`);
  }
  if (!(Number.isInteger(rows) && rows >= 1 && rows <= 64)) throw invalid(`${field}.rows: must be in [1, 64], but is ${rows}`);
  if (!(Number.isInteger(width) && width >= 2 && width <= 65536 && (width & (width - 1)) === 0)) {
    throw invalid(`${field}.width: must be a power of two in [2, 65536], but is ${width}`);
  }
  if (!(holdoutShare > 0 && holdoutShare < 1)) throw invalid(`${field}.holdoutShare: must be in (0, 1), but is ${holdoutShare}`);
  let s;
  try {
    s = BigInt(salt);
  } catch {
    throw invalid(`${field}.salt: must be a uint64, but is ${JSON.stringify(String(salt))}`);
  }
  if (s < 0n || s > MASK64) throw invalid(`${field}.salt: must be a uint64, but is ${s}`);
  return Object.freeze({
    epsilon, maxLength, rows, width, holdoutShare, salt: s,
    levels: maxLength + 1,
    keepProbability: 1 / (1 + Math.exp(-epsilon)),
  });
}

/** The design of a served Design (JSON mapping) whose parameters are heavyHitters (0 or absent
 * means the default, as the collector reads it); its channel (a, b) must be (keep, 1 - keep). */
export function heavyHittersDesignFromWire(design) {
  const p = design && design.parameters && design.parameters.heavyHitters;
  if (!p) throw invalid('design.parameters: a heavy-hitters metric needs a heavyHitters design');
  const d = makeHeavyHittersDesign({
    epsilon: Number(p.epsilon) || Math.log(3), maxLength: Number(p.maxLength) || 32,
    rows: Number(p.rows) || 16, width: Number(p.width) || 1024,
    holdoutShare: Number(p.holdoutShare) || 0.25, salt: p.salt ?? '0',
  });
  const a = Number(design.a ?? 0);
  const b = Number(design.b ?? 0);
  if (Math.abs(a - d.keepProbability) > CHANNEL_TOLERANCE || Math.abs(b - (1 - d.keepProbability)) > CHANNEL_TOLERANCE) {
    throw invalid(`design: channel (a = ${design.a}, b = ${design.b}) does not match the heavy-hitters bit (keep = ${d.keepProbability})`);
  }
  return d;
}

/** The bytes of a value: a string as UTF-8 (a lone surrogate is refused), a Uint8Array (or
 * other ArrayBuffer view, or ArrayBuffer) as it is. Throws INVALID_ARGUMENT naming "value",
 * never repeating it. */
export function valueBytes(value) {
  if (typeof value === 'string') {
    if (LONE_SURROGATE.test(value)) {
      throw invalid('value: is not valid Unicode (a lone surrogate); pass bytes or a string encodable as UTF-8');
    }
    return new TextEncoder().encode(value);
  }
  if (value instanceof Uint8Array) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength));
  if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
  throw invalid(`value: must be a string or bytes (Uint8Array), but is ${value === null ? 'null' : typeof value}`);
}

/** At most maxLength bytes, no NUL byte; throws INVALID_ARGUMENT naming "value" with its length
 * and the limit, or the NUL's offset (never the value). */
export function validateHeavyHitterValue(design, bytes) {
  if (bytes.length > design.maxLength) {
    throw invalid(`value: has ${bytes.length} bytes; the metric allows at most ${design.maxLength}`);
  }
  const nul = bytes.indexOf(0);
  if (nul >= 0) throw invalid(`value: has a NUL byte at offset ${nul}; values are NUL-free bytes`);
}

/** The bytes a report of `group` encodes (see the file's comment). */
export function prefixOf(bytes, group) {
  if (group === 0 || group > bytes.length) {
    const whole = new Uint8Array(bytes.length + 1);
    whole.set(bytes);
    return whole;
  }
  return bytes.slice(0, group);
}

/** h_{group,row}(data) in [0, width) (HeavyHittersHash). salt: a BigInt. */
export function sketchHash(salt, width, group, row, data) {
  let h = FNV_OFFSET;
  const add = (byte) => { h = ((h ^ BigInt(byte)) * FNV_PRIME) & MASK64; };
  let s = BigInt.asUintN(64, BigInt(salt));
  for (let i = 0; i < 8; i++) {
    add(Number(s & 0xffn));
    s >>= 8n;
  }
  add(group & 0xff);
  add(row & 0xff);
  for (const byte of data) add(byte);
  h ^= h >> 30n;
  h = (h * 0xbf58476d1ce4e5b9n) & MASK64;
  h ^= h >> 27n;
  h = (h * 0x94d049bb133111ebn) & MASK64;
  h ^= h >> 31n;
  return Number(h & BigInt(width - 1));
}

/** H[cell][coefficient] of the Sylvester-Hadamard matrix is +1. */
export function hadamardPlus(cell, coefficient) {
  let x = cell & coefficient;
  let parity = 0;
  while (x) {
    parity ^= 1;
    x &= x - 1;
  }
  return parity === 0;
}

/** The device's group: 0 with probability holdoutShare, else 1 + below(L). draws: {bernoulli,
 * below} (drawsFrom(a RandomSource), or uniformDraws in tests). */
export function drawGroup(design, draws) {
  if (draws.bernoulli(design.holdoutShare)) return 0;
  return 1 + draws.below(design.levels);
}

/** The randomized answer of `bytes` (validated) for a device of `group`: {bit, heavyHitters:
 * {group, row, coefficient}} as the JSON mapping of a Report carries it. */
export function randomizeHeavyHitter(design, bytes, group, draws) {
  validateHeavyHitterValue(design, bytes);
  if (!(Number.isInteger(group) && group >= 0 && group <= design.levels)) {
    throw invalid(`group: must be in [0, ${design.levels}], but is ${group}`);
  }
  const row = draws.below(design.rows);
  const coefficient = draws.below(design.width);
  const cell = sketchHash(design.salt, design.width, group, row, prefixOf(bytes, group));
  const truth = hadamardPlus(cell, coefficient);
  const keep = draws.bernoulli(design.keepProbability);
  return { bit: (keep ? truth : !truth) ? 1 : 0, heavyHitters: { group, row, coefficient } };
}

// SHA-256 and HMAC-SHA256 (FIPS 180-4, RFC 2104), synchronous so that the memo key is computed
// inside the store's one read-modify-write (Web Crypto's subtle is async and absent on plain
// http pages).
const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** SHA-256 of bytes (Uint8Array) -> 32 bytes. */
export function sha256(bytes) {
  const bitLength = bytes.length * 8;
  const padded = new Uint8Array(((bytes.length + 9 + 63) >> 6) << 6);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bitLength / 2 ** 32));
  view.setUint32(padded.length - 4, bitLength >>> 0);
  const h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const w = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + 4 * i);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      hh = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) outView.setUint32(4 * i, h[i]);
  return out;
}

/** HMAC-SHA256(key, message) -> 32 bytes (key and message Uint8Arrays, key <= 64 bytes). */
export function hmacSha256(key, message) {
  const block = new Uint8Array(64);
  block.set(key.length > 64 ? sha256(key) : key);
  const inner = new Uint8Array(64 + message.length);
  const outer = new Uint8Array(64 + 32);
  for (let i = 0; i < 64; i++) {
    inner[i] = block[i] ^ 0x36;
    outer[i] = block[i] ^ 0x5c;
  }
  inner.set(message, 64);
  outer.set(sha256(inner), 64);
  return sha256(outer);
}

/** Lower-case hex of bytes. */
export function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Bytes of lower- or upper-case hex. */
export function fromHex(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(2 * i, 2), 16);
  return out;
}
