// The JS SDK's randomizers (src/randomizer.js's table) against the golden vectors
// tests/golden/randomizer_vectors.json, which the C++ and Python SDKs check too (issue 27).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { supportChannel } from '../src/categorical.js';
import { clipValue, levelOf, makeNumericDesign } from '../src/numeric.js';
import { RANDOMIZERS, uniformDraws } from '../src/randomizer.js';

const VECTORS = new URL('../../../tests/golden/randomizer_vectors.json', import.meta.url);

// A numeric vector's design and level: the value clipped (checked against `clipped` and
// `clipped_value`), then levelOf with the device's alpha (checked against `level`); the design's
// channel (a, b) checked against the mechanism's.
function numericLevel(v) {
  const { design, name } = v;
  const d = makeNumericDesign(design.mechanism, design.epsilon, design.edges, design.d);
  const e = Math.exp(d.mechanism === 'ONE_BIT_MEAN' ? d.epsilon : d.epsilon / 2);
  assert.ok(Math.abs(design.a - e / (e + 1)) <= 1e-15, name);
  assert.ok(Math.abs(design.b - 1 / (e + 1)) <= 1e-15, name);
  const { value, clipped } = clipValue(d, v.value);
  assert.deepEqual([value, clipped], [v.clipped_value, v.clipped], name);
  const level = levelOf(d, value, v.alpha);
  assert.equal(level, v.level, name);
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
  assert.deepEqual([...kinds].sort(), ['categorical', 'numeric', 'yes_no']);
});
