"""The Python SDK's randomizers (deniable.randomizer's table) against the golden vectors
tests/golden/randomizer_vectors.json, which the C++ and JS SDKs check too (issue 27). Run with
the installed package (CTest python_sdk_unit)."""
import base64
import json
import math
import os
import unittest

from deniable import categorical, numeric, randomizer
from deniable.v1 import design_pb2

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests",
                       "golden", "randomizer_vectors.json")
MECHANISMS = {"K_RR": design_pb2.K_RR, "OUE": design_pb2.OUE, "OLH": design_pb2.OLH}
NUMERIC = {"ONE_BIT_MEAN": design_pb2.ONE_BIT_MEAN, "D_BIT_FLIP": design_pb2.D_BIT_FLIP}


def numeric_level(test, v):
    """A numeric vector's design and level: the value clipped (checked against `clipped` and
    `clipped_value`), then numeric.level_of with the device's alpha (checked against `level`);
    the design's channel (a, b) checked against the mechanism's."""
    design = v["design"]
    d = numeric.make_design(NUMERIC[design["mechanism"]], design["epsilon"], design["edges"],
                            design["d"])
    e = math.exp(d.epsilon if d.mechanism == numeric.ONE_BIT_MEAN else d.epsilon / 2)
    test.assertAlmostEqual(design["a"], e / (e + 1), delta=1e-15)
    test.assertAlmostEqual(design["b"], 1 / (e + 1), delta=1e-15)
    x, clipped = numeric.clip(d, v["value"])
    test.assertEqual((x, clipped), (v["clipped_value"], v["clipped"]))
    level = numeric.level_of(d, x, v["alpha"])
    test.assertEqual(level, v["level"])
    return d, level


class GoldenVectorsTest(unittest.TestCase):
    def test_every_vector(self):
        with open(VECTORS, encoding="utf-8") as f:
            vectors = json.load(f)["vectors"]
        self.assertGreater(len(vectors), 100)
        kinds = set()
        for v in vectors:
            with self.subTest(v["name"]):
                design, value, report = v["design"], v["value"], v["report"]
                draws = randomizer.UniformDraws(v["uniforms"])
                kinds.add(design["kind"])
                if design["kind"] == "yes_no":
                    bit = randomizer.RANDOMIZERS["yes_no"](design["a"], design["b"], value == 1,
                                                           draws)
                    self.assertEqual(bit, report["bit"])
                elif design["kind"] == "numeric":
                    d, level = numeric_level(self, v)
                    drawn = randomizer.RANDOMIZERS["numeric"](d, level, draws)
                    self.assertEqual(drawn.bit, report["bit"])
                    want = report.get("numeric")
                    self.assertEqual(drawn.HasField("numeric"), want is not None)
                    if want is not None:
                        self.assertEqual(list(drawn.numeric.buckets), want["buckets"])
                        self.assertEqual([bool(b) for b in drawn.numeric.bits],
                                         [bool(b) for b in want["bits"]])
                else:
                    mechanism = MECHANISMS[design["mechanism"]]
                    p, q, g = categorical.support_channel(mechanism, design["k"],
                                                          design["epsilon"])
                    self.assertAlmostEqual(p, design["p_star"], delta=1e-15)
                    self.assertAlmostEqual(q, design["q_star"], delta=1e-15)
                    self.assertEqual(g, design["hash_buckets"])
                    d = categorical.CategoricalDesign(mechanism=mechanism, k=design["k"],
                                                      epsilon=design["epsilon"], g=g,
                                                      p_star=p, q_star=q)
                    drawn = randomizer.RANDOMIZERS["categorical"](d, value, draws)
                    want = report["categorical"]
                    if design["mechanism"] == "K_RR":
                        self.assertEqual(drawn.category, want["category"])
                    elif design["mechanism"] == "OUE":
                        self.assertEqual(base64.b64encode(drawn.bits).decode(), want["bits"])
                    else:
                        self.assertEqual((drawn.hash_a, drawn.hash_b, drawn.bucket),
                                         (want["hash_a"], want["hash_b"], want["bucket"]))
                # The whole stream is used, and no more (UniformDraws raises past its end).
                self.assertEqual(draws.used, len(v["uniforms"]))
        self.assertEqual(kinds, {"yes_no", "categorical", "numeric"})


if __name__ == "__main__":
    unittest.main()
