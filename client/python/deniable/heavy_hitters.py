"""Heavy hitters over an open dictionary on the device: the `heavy_hitters` kind's randomizer
(common/include/deniable/common/heavy_hitters.h; docs/statistics.md section 11). A value is a byte
string of at most max_length bytes with no NUL byte; tests/golden/heavy_hitters_vectors.json
holds this module to the C++ one:

1. draw_group(): once per device and metric (the Reporter keeps it in the device file):
   bernoulli(holdout_share) gives group 0 (estimation), else 1 + randbelow(L), L = max_length + 1
   (a discovery level).
2. prefix(): the bytes a group's reports carry: group 0 and groups > len(value) the value and one
   NUL byte (the whole value), group g <= len(value) its first g bytes.
3. sketch_hash(): h_{group,row}(prefix) in [0, width): FNV-1a 64 over the salt's 8 bytes (little
   endian), the group and the row as one byte each and the prefix, then splitmix64's finalizer,
   masked to the width.
4. randomize(): row = randbelow(rows), coefficient = randbelow(width), keep =
   bernoulli(e^eps / (1 + e^eps)); the true Hadamard entry is 1 when popcount(cell &
   coefficient) is even (cell = the hash), and the bit is it when kept, flipped otherwise.

Group, row and coefficient do not depend on the value, so one report is eps-LDP. Pure functions;
the randomness comes from the `rng` passed in (the Reporter's: `secrets`).
"""
import dataclasses
import math
from typing import Any, Union

from deniable.errors import DeniableError, StatusCode
from deniable.v1 import report_service_pb2

_MASK64 = (1 << 64) - 1
_FNV_OFFSET = 14695981039346656037
_FNV_PRIME = 1099511628211
ESTIMATION_GROUP = 0
# As deniable.categorical: a served (a, b) must match the design's bit channel to this tolerance.
CHANNEL_TOLERANCE = 1e-12


@dataclasses.dataclass(frozen=True)
class HeavyHittersDesign:
    """A heavy-hitters design (HeavyHittersDesign in C++): epsilon in nats per report,
    max_length in bytes, rows R and width W of the sketch, holdout_share of the devices in the
    estimation group, and the server's hash salt (a uint64)."""
    epsilon: float = math.log(3)
    max_length: int = 32
    rows: int = 16
    width: int = 1024
    holdout_share: float = 0.25
    salt: int = 0

    @property
    def levels(self) -> int:
        """L = max_length + 1: the discovery groups are 1 .. L."""
        return self.max_length + 1

    @property
    def keep_probability(self) -> float:
        """P(a report's bit is the true Hadamard entry) = e^eps / (1 + e^eps)."""
        return 1.0 / (1.0 + math.exp(-self.epsilon))


def _invalid(message: str) -> DeniableError:
    return DeniableError(StatusCode.INVALID_ARGUMENT, message)


def make_design(epsilon: float = math.log(3), max_length: int = 32, rows: int = 16,
                width: int = 1024, holdout_share: float = 0.25, salt: int = 0,
                field: str = "design.parameters.heavy_hitters") -> HeavyHittersDesign:
    """A checked design (ValidateHeavyHittersDesign's limits): epsilon in (0, 20], max_length
    in [1, 64], rows in [1, 64], width a power of two in [2, 65536], holdout_share in (0, 1),
    salt in [0, 2^64). Raises DeniableError(INVALID_ARGUMENT) naming "<field>.epsilon",
    ".max_length", ".rows", ".width", ".holdout_share" or ".salt"."""
    if not 0 < epsilon <= 20:
        raise _invalid(f"{field}.epsilon: must be in (0, 20] nats, but is {epsilon}")
    if not 1 <= max_length <= 64:
        raise _invalid(f"{field}.max_length: must be in [1, 64] bytes, but is {max_length}")
    if not 1 <= rows <= 64:
        raise _invalid(f"{field}.rows: must be in [1, 64], but is {rows}")
    if not (2 <= width <= 65536 and width & (width - 1) == 0):
        raise _invalid(f"{field}.width: must be a power of two in [2, 65536], but is {width}")
    if not 0 < holdout_share < 1:
        raise _invalid(f"{field}.holdout_share: must be in (0, 1), but is {holdout_share}")
    if not 0 <= salt <= _MASK64:
        raise _invalid(f"{field}.salt: must be a uint64, but is {salt}")
    return HeavyHittersDesign(float(epsilon), int(max_length), int(rows), int(width),
                              float(holdout_share), int(salt))


def design_from_wire(design: Any) -> HeavyHittersDesign:
    """The HeavyHittersDesign of a served v1.Design whose parameters are heavy_hitters (0 in a
    field means its default, as the collector reads it). Raises DeniableError(INVALID_ARGUMENT)
    naming the field, or "design" when the served channel (a, b) is not (keep, 1 - keep)."""
    p = design.parameters.heavy_hitters
    d = make_design(epsilon=p.epsilon or math.log(3), max_length=p.max_length or 32,
                    rows=p.rows or 16, width=p.width or 1024,
                    holdout_share=p.holdout_share or 0.25, salt=p.salt)
    keep = d.keep_probability
    if abs(design.a - keep) > CHANNEL_TOLERANCE or abs(design.b - (1 - keep)) > CHANNEL_TOLERANCE:
        raise _invalid(f"design: channel (a = {design.a}, b = {design.b}) does not match the "
                       f"heavy-hitters bit (keep = {keep})")
    return d


def value_bytes(value: Union[bytes, bytearray, memoryview, str]) -> bytes:
    """The bytes of a value: bytes as they are, str encoded as UTF-8. Raises
    DeniableError(INVALID_ARGUMENT) naming "value" (never repeating it) for another type or a
    str that is not encodable (a lone surrogate)."""
    if isinstance(value, str):
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise _invalid(f"value: is not valid Unicode (a lone surrogate at offset {e.start}); "
                           "pass bytes or a str encodable as UTF-8") from None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise _invalid(f"value: must be bytes or str, but is a {type(value).__name__}")


def validate_value(design: HeavyHittersDesign, value: bytes) -> None:
    """At most max_length bytes, no NUL byte. Raises DeniableError(INVALID_ARGUMENT) naming
    "value" with its length and the limit, or the NUL byte's offset; never the value."""
    if len(value) > design.max_length:
        raise _invalid(f"value: has {len(value)} bytes; the metric allows at most "
                       f"{design.max_length}")
    nul = value.find(b"\0")
    if nul >= 0:
        raise _invalid(f"value: has a NUL byte at offset {nul}; values are NUL-free bytes")


def prefix(value: bytes, group: int) -> bytes:
    """The bytes a report of `group` encodes (see the module docstring)."""
    if group == ESTIMATION_GROUP or group > len(value):
        return bytes(value) + b"\0"
    return bytes(value[:group])


def sketch_hash(salt: int, width: int, group: int, row: int, data: bytes) -> int:
    """h_{group,row}(data) in [0, width) (HeavyHittersHash): FNV-1a 64 over the salt's 8 bytes
    little endian, group & 0xff, row & 0xff and `data`; splitmix64's finalizer; & (width - 1)."""
    h = _FNV_OFFSET
    for byte in (salt & _MASK64).to_bytes(8, "little") + bytes((group & 0xff, row & 0xff)) + data:
        h = ((h ^ byte) * _FNV_PRIME) & _MASK64
    h ^= h >> 30
    h = (h * 0xbf58476d1ce4e5b9) & _MASK64
    h ^= h >> 27
    h = (h * 0x94d049bb133111eb) & _MASK64
    h ^= h >> 31
    return h & (width - 1)


def hadamard_plus(cell: int, coefficient: int) -> bool:
    """H[cell][coefficient] of the Sylvester-Hadamard matrix is +1."""
    return bin(cell & coefficient).count("1") % 2 == 0


def draw_group(design: HeavyHittersDesign, rng: Any) -> int:
    """The device's group: 0 with probability holdout_share, else 1 + randbelow(L)."""
    if rng.bernoulli(design.holdout_share):
        return ESTIMATION_GROUP
    return 1 + rng.randbelow(design.levels)


def randomize(design: HeavyHittersDesign, value: bytes, group: int, rng: Any) -> Any:
    """The randomized answer of `value` (checked with validate_value) for a device of `group`:
    a v1.Report with only `bit` and `heavy_hitters` set. Raises DeniableError(INVALID_ARGUMENT)
    naming "value" or "group" (> L)."""
    validate_value(design, value)
    if not 0 <= group <= design.levels:
        raise _invalid(f"group: must be in [0, {design.levels}], but is {group}")
    row = rng.randbelow(design.rows)
    coefficient = rng.randbelow(design.width)
    cell = sketch_hash(design.salt, design.width, group, row, prefix(value, group))
    truth = hadamard_plus(cell, coefficient)
    keep = rng.bernoulli(design.keep_probability)
    report = report_service_pb2.Report(bit=int(truth if keep else not truth))
    report.heavy_hitters.group = group
    report.heavy_hitters.row = row
    report.heavy_hitters.coefficient = coefficient
    return report
