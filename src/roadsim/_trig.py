"""Sine and cosine of an arbitrary angle for the compiled passes, without the math library.

`sin_cos` takes the angle less the nearest multiple k of pi/2 (pi/2 in three parts, so
that ``k * part`` is exact for the first two: Cody and Waite's reduction), sums the
Taylor series of sine and cosine on [-pi/4, pi/4] up to the terms below half an ulp
(by Estrin's scheme, whose products do not wait on each other), and picks the quadrant
from k with selects instead of branches. Angles beyond `_REDUCE_MAX`, and infinities and
NaN, go to the library. Against ``math`` over random angles (tests/test_trig.py): at
most 2 ulp apart. There is no fast-math here, so the results are the same on every run.

Where it pays, and where it does not (medians on the 2-core reference machine):

- Alone, over angles spread on [-pi, pi]: 8.5 ns a pair against 18.6 for libm's ``sin``
  and ``cos`` (which LLVM merges into one ``sincos``), and 21 ns against 34 when each
  call waits on the one before.
- The footprints' pass (`roadsim.sensors.occupancy`), which needs the sine and cosine of
  each actor's heading: 0.34 ms against 0.43 for 10,000 vehicles on one thread.
- Not the bicycle model's small angles (the steering angle, half the turn of a tick):
  libm answers those from a short polynomial without any reduction, and the model was
  slower with this one (0.42 ms against 0.39), so it keeps the library.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

from roadsim._jit import njit_leaf

# pi to 50 digits, for the parts of pi/2 (the float pi has 53 bits of it only).
_PI_DIGITS = "3.14159265358979323846264338327950288419716939937510"


def _parts_of_half_pi() -> tuple[float, float, float]:
    """pi/2 as hi + mid + lo, hi and mid with 33 significant bits each (so that ``k *
    hi`` and ``k * mid`` are exact for |k| < 2**20), lo the float nearest the rest."""
    with localcontext() as context:
        context.prec = 60
        rest = Decimal(_PI_DIGITS) / 2
        parts = []
        for _ in range(2):
            mantissa, exponent = math.frexp(float(rest))
            part = math.ldexp(math.floor(math.ldexp(mantissa, 33)), exponent - 33)
            parts.append(part)
            rest -= Decimal(part)
        return parts[0], parts[1], float(rest)


_HALF_PI_HI, _HALF_PI_MID, _HALF_PI_LO = _parts_of_half_pi()
_TWO_OVER_PI = 2.0 / math.pi
# Past this, k needs more than 20 bits and the reduction loses digits: the library.
_REDUCE_MAX = 5.0e5

# Taylor coefficients: (-1)^n / (2n + 1)! for sine (n >= 1), (-1)^n / (2n)! for cosine.
_S1, _S2, _S3, _S4, _S5, _S6, _S7 = ((-1.0) ** n / math.factorial(2 * n + 1) for n in range(1, 8))
_C1, _C2, _C3, _C4, _C5, _C6, _C7, _C8 = ((-1.0) ** n / math.factorial(2 * n) for n in range(1, 9))


@njit_leaf
def sin_cos(angle: float) -> tuple[float, float]:
    """``(sin(angle), cos(angle))``."""
    if not math.fabs(angle) < _REDUCE_MAX:  # large, inf or NaN
        return math.sin(angle), math.cos(angle)
    k = math.floor(angle * _TWO_OVER_PI + 0.5)
    r = ((angle - k * _HALF_PI_HI) - k * _HALF_PI_MID) - k * _HALF_PI_LO
    # The polynomials in r^2 by Estrin's scheme (pairs, then pairs of pairs), whose
    # products do not wait on each other as Horner's do: a pass waits on the result.
    r2 = r * r
    r4 = r2 * r2
    r8 = r4 * r4
    sin_tail = (_S1 + _S2 * r2) + r4 * (_S3 + _S4 * r2) + r8 * ((_S5 + _S6 * r2) + r4 * _S7)
    sin_r = math.copysign(r + r * r2 * sin_tail, r)  # sin(-0) is -0
    cos_tail = (_C2 + _C3 * r2) + r4 * (_C4 + _C5 * r2) + r8 * ((_C6 + _C7 * r2) + r4 * _C8)
    cos_r = 1.0 + (_C1 * r2 + r4 * cos_tail)
    # Quadrant q = k mod 4: (sin, cos) is (s, c), (c, -s), (-s, -c) or (-c, s), by
    # selects and exact sign flips rather than branches (headings fall in any quadrant).
    quadrant = int(k) & 3
    odd = quadrant & 1
    sine = cos_r if odd else sin_r
    cosine = sin_r if odd else cos_r
    return sine * (1.0 - (quadrant & 2)), cosine * (1.0 - ((quadrant + 1) & 2))
