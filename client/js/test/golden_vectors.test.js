// The JS SDK's randomizers (src/randomizer.js's table) against the golden vectors
// tests/golden/randomizer_vectors.json, which the C++ and Python SDKs check too (issue 27).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { supportChannel } from '../src/categorical.js';
import { clipValue, levelOf, makeNumericDesign } from '../src/numeric.js';
import { RANDOMIZERS, uniformDraws } from '../src/randomizer.js';

const VECTORS = new URL('../../../tests/golden/randomizer_vectors.json', import.meta.url);

// A numeric vector's design and level: from its value (clipped) and the device's alpha, checked
// against the vector's level when it states one.
function numericLevel(v) {
  const { design } = v;
  const d = makeNumericDesign(design.mechanism.toUpperCase(), design.epsilon,
    design.bucket_edges ?? design.edges, design.sampled_buckets ?? 0);
  if (!('alpha' in v) && !('level' in v)) return { d, level: v.value };  // the value is the level
  const { value, clipped } = clipValue(d, v.value);
  if ('clipped' in v) assert.equal(clipped, v.clipped, v.name);
  const level = levelOf(d, value, v.alpha ?? 0);
  if ('level' in v) assert.equal(level, v.level, v.name);
  return { d, level };
}

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
    } else if (design.kind === 'numeric') {
      const { d, level } = numericLevel(v);
      const drawn = RANDOMIZERS.numeric(d, level, draws);
      assert.equal(drawn.bit, report.bit, name);
      assert.equal(drawn.numeric === undefined, report.numeric === undefined, name);
      if (report.numeric) {
        assert.deepEqual(drawn.numeric.buckets, report.numeric.buckets, name);
        assert.deepEqual(drawn.numeric.bits, report.numeric.bits.map(Boolean), name);
      }
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
  // Numeric rows (issue 28) join once the C++ generator writes them.
  assert.ok(kinds.has('yes_no') && kinds.has('categorical'));
  assert.ok([...kinds].every((k) => ['categorical', 'numeric', 'yes_no'].includes(k)), [...kinds].join());
});
