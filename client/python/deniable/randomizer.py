"""The randomizer table: how a device turns a true value into the wire report, one entry per kind
of report (common/include/deniable/common/mechanism.h is the C++ seam; docs/architecture.md).

Every randomizer draws from an `rng` with two methods, in the order the golden vectors fix
(tests/golden/README.md, common/include/deniable/common/draws.h):
  bernoulli(p) -> bool   True with probability p;
  randbelow(n) -> int    uniform in [0, n).
The Reporter passes its secure generator (`secrets`); the golden-vector test passes
UniformDraws over the file's stream of uniform numbers, so the C++, Python and JS SDKs are held
to one contract by data.
"""
import math

from deniable import categorical, numeric


def randomize_answer(a, b, answer, rng):
    """The randomized bit (0 or 1) of a yes/no answer with channel (a, b): P(1 | yes) = a,
    P(1 | no) = b. One bernoulli draw."""
    return int(rng.bernoulli(a if answer else b))


# Kind of report -> randomizer (the design's `oneof`: every yes/no kind, `categorical`, or
# `numeric`: the level of a value, see deniable.numeric).
RANDOMIZERS = {
    "yes_no": randomize_answer,
    "categorical": categorical.randomize,
    "numeric": numeric.randomize,
}


class UniformDraws:
    """Draws from a fixed list of uniform numbers in [0, 1) (tests and golden vectors only):
    bernoulli(p) = u < p, randbelow(n) = min(floor(u * n), n - 1), one number each."""

    def __init__(self, uniforms):
        self._uniforms = list(uniforms)
        self.used = 0

    def _next(self):
        if self.used >= len(self._uniforms):
            raise IndexError("UniformDraws: the stream of uniform numbers is exhausted")
        u = self._uniforms[self.used]
        self.used += 1
        return u

    def bernoulli(self, p):
        return self._next() < p

    def randbelow(self, n):
        return min(math.floor(self._next() * n), n - 1)
