// The randomizer table: how a device turns a true value into the wire report, one entry per kind
// of report (common/include/deniable/common/mechanism.h is the C++ seam; docs/architecture.md).
//
// Every randomizer draws from `draws` = {bernoulli(p) -> boolean, below(n) -> [0, n)}, in the
// order the golden vectors fix (tests/golden/README.md): the Reporter passes drawsFrom(its
// RandomSource) (crypto.getRandomValues), the golden-vector test uniformDraws over the file's
// stream of uniform numbers, so the C++, Python and JS SDKs are held to one contract by data.

import { randomizeCategory } from './categorical.js';
import { randomizeNumeric } from './numeric.js';

/** The randomized bit (0 or 1) of a yes/no answer with channel (a, b): one bernoulli draw. */
export function randomizeAnswer(a, b, answer, draws) {
  return draws.bernoulli(answer ? a : b) ? 1 : 0;
}

/** Kind of report -> randomizer (every yes/no design kind, `categorical`, or `numeric`: the
 * level of a value, see numeric.js). */
export const RANDOMIZERS = Object.freeze({
  yes_no: randomizeAnswer,
  categorical: randomizeCategory,
  numeric: randomizeNumeric,
});

/** For tests and golden vectors ONLY: draws from a fixed list of uniform numbers in [0, 1):
 * bernoulli(p) = u < p, below(n) = min(floor(u * n), n - 1), one number each; `used` counts them.
 * Throws past the end of the list. */
export function uniformDraws(uniforms) {
  const draws = {
    used: 0,
    next() {
      if (draws.used >= uniforms.length) throw new Error('uniformDraws: the stream is exhausted');
      return uniforms[draws.used++];
    },
    bernoulli: (p) => draws.next() < p,
    below: (n) => Math.min(Math.floor(draws.next() * n), n - 1),
  };
  return draws;
}
