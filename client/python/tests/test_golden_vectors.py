"""The Python SDK's randomizers (deniable.randomizer's table) against the golden vectors
tests/golden/randomizer_vectors.json, which the C++ and JS SDKs check too (issue 27). Run with
the installed package (CTest python_sdk_unit)."""
import base64
import json
import os
import unittest

from deniable import categorical, randomizer
from deniable.v1 import design_pb2

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests",
                       "golden", "randomizer_vectors.json")
MECHANISMS = {"K_RR": design_pb2.K_RR, "OUE": design_pb2.OUE, "OLH": design_pb2.OLH}


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
        self.assertEqual(kinds, {"yes_no", "categorical"})


if __name__ == "__main__":
    unittest.main()
