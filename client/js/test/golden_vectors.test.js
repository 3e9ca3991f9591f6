// The JS SDK's randomizers (src/randomizer.js's table) against the golden vectors
// tests/golden/randomizer_vectors.json, which the C++ and Python SDKs check too (issue 27).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { supportChannel } from '../src/categorical.js';
import { RANDOMIZERS, uniformDraws } from '../src/randomizer.js';

const VECTORS = new URL('../../../tests/golden/randomizer_vectors.json', import.meta.url);

test('every golden vector gives its wire report', () => {
  const { vectors } = JSON.parse(readFileSync(VECTORS, 'utf8'));
  assert.ok(vectors.length > 100);
  const kinds = new Set();
  for (const v of vectors) {
    const { design, value, report, uniforms, name } = v;
    const draws = uniformDraws(uniforms);
    kinds.add(design.kind);
    if (design.kind === 'yes_no') {
      assert.equal(RANDOMIZERS.yes_no(design.a, design.b, value === 1, draws), report.bit, name);
    } else {
      const { pStar, qStar, g } = supportChannel(design.mechanism, design.k, design.epsilon);
      assert.ok(Math.abs(pStar - design.p_star) <= 1e-15, name);
      assert.ok(Math.abs(qStar - design.q_star) <= 1e-15, name);
      assert.equal(g, design.hash_buckets, name);
      const d = { mechanism: design.mechanism, k: design.k, epsilon: design.epsilon, g, pStar, qStar };
      const drawn = RANDOMIZERS.categorical(d, value, draws);
      const want = report.categorical;
      if (design.mechanism === 'K_RR') {
        assert.equal(drawn.category, want.category, name);
      } else if (design.mechanism === 'OUE') {
        assert.equal(drawn.bits, want.bits, name);
      } else {
        assert.deepEqual([drawn.hashA, drawn.hashB, drawn.bucket],
          [want.hash_a, want.hash_b, want.bucket], name);
      }
    }
    // The whole stream is used, and no more (uniformDraws throws past its end).
    assert.equal(draws.used, uniforms.length, name);
  }
  assert.deepEqual([...kinds].sort(), ['categorical', 'yes_no']);
});
