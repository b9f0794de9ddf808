"""The numpy array types the package annotates with, named once.

Compiled kernels (`roadsim._jit`) use them in annotations only, which numba ignores.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = [
    "BoolArray",
    "Float32Array",
    "FloatArray",
    "Int32Array",
    "IntArray",
    "ObjectArray",
    "UInt8Array",
    "UIntArray",
]

FloatArray = npt.NDArray[np.float64]
Float32Array = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]
UIntArray = npt.NDArray[np.uint64]
UInt8Array = npt.NDArray[np.uint8]
BoolArray = npt.NDArray[np.bool_]
ObjectArray = npt.NDArray[np.object_]
