// Randomness from the platform's secure generator (crypto.getRandomValues: Web Crypto in
// browsers, node:crypto's webcrypto in Node 18+). Never Math.random.

function secureCrypto() {
  const c = globalThis.crypto;
  if (!c || typeof c.getRandomValues !== 'function') {
    throw new Error('FAILED_PRECONDITION: crypto.getRandomValues is not available');
  }
  return c;
}

/** The production source: bytes(n) and uniform() in [0, 1) with 53 random bits. */
export const secureRandom = Object.freeze({
  bytes(n) {
    return secureCrypto().getRandomValues(new Uint8Array(n));
  },
  uniform() {
    const w = secureCrypto().getRandomValues(new Uint32Array(2));
    return ((w[0] >>> 5) * 67108864 + (w[1] >>> 6)) / 9007199254740992;  // 2^26, 2^53
  },
});

/** For tests and simulations ONLY: a reproducible source (splitmix64) seeded with an integer.
 * Not secure: a report randomized with it is as private as its seed is secret. */
export function seededRandom(seed) {
  let state = BigInt.asUintN(64, BigInt(seed));
  const next = () => {
    state = BigInt.asUintN(64, state + 0x9e3779b97f4a7c15n);
    let z = state;
    z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
    z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
    return z ^ (z >> 31n);
  };
  return {
    bytes(n) {
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) out[i] = Number(next() & 0xffn);
      return out;
    },
    uniform() {
      return Number(next() >> 11n) / 9007199254740992;
    },
  };
}

/** true with probability p, from a source's 53-bit uniform. */
export function bernoulli(source, p) {
  return source.uniform() < p;
}
