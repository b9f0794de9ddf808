"""What both camera renderers share: the pinhole model, the light and the tone mapping.

Frames. A camera looks along its sensor frame's +x (ISO 8855: x forward, y left, z up;
`roadsim.sensors.mount`). Its image has W columns and H rows, row 0 at the top and column
0 on the left; the continuous pixel coordinates (u right, v down) put the centre of pixel
(row i, column j) at (j + 0.5, i + 0.5). A point (x, y, z) of the sensor frame in front
of the camera (x > 0) projects to::

    u = cx - f y / x,    v = cy - f z / x,    depth = x

with the principal point (cx, cy) = (W / 2, H / 2) and the focal length in pixels
``f = (W / 2) / tan(horizontal_fov / 2)`` (square pixels, so the vertical field of view
follows from the aspect ratio). ``depth`` is the distance along the optical axis, not
along the ray. In OpenCV's optical frame (x right, y down, z forward: ``(-y, -z, x)`` of
ours) that is the usual ``K = [[f, 0, cx], [0, f, cy], [0, 0, 1]]`` (`CameraModel.matrix`).

Light (`Lighting`): linear radiance in arbitrary units (a white surface facing a high sun
is about 2.5). The sky is a gradient from the horizon to the zenith with a glow around the
sun and the sun's disc (0.53 degrees across, very bright: the HDR images keep it); below
the horizon, where nothing is hit, a dim ground colour. A surface of albedo ``a``
(`roadsim.road.surface_classes.LOOK_ALBEDO`: its class's, or a road mark's paint) with
unit normal ``n`` (turned to face the camera) reflects::

    a * (sun * max(n . s, 0) * lit + ambient * (0.65 + 0.35 n_z))

where ``s`` points to the sun and ``lit`` is 0 in the shadow of another surface, 1 in
the sun. A sun below the horizon lights nothing and dims the sky (night).

Tone mapping (`tone_map`, for `roadsim.sensors.camera.CameraImage.preview`): exposure,
then the ACES filmic curve (Narkowicz's fit), then the sRGB transfer function.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from roadsim._types import Float32Array, FloatArray

__all__ = ["GL_EYE_FROM_SENSOR", "CameraModel", "Lighting", "tone_map"]


#: The rotation from our sensor frame (x forward, y left, z up) to OpenGL's eye frame
#: (x right, y up, looking down -z).
GL_EYE_FROM_SENSOR: FloatArray = np.array([[0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [-1.0, 0.0, 0.0]])

#: The sun's angular radius (rad) and the width of the glow around it (rad).
SUN_DISC_RADIUS = math.radians(0.265)
SUN_GLOW_WIDTH = 0.08
#: The glow falls as ``exp(-(1 - cos a) / (1 - cos SUN_GLOW_WIDTH))`` at an angle a from
#: the sun (about a Gaussian of a).
_GLOW_K = 1.0 / (1.0 - math.cos(SUN_GLOW_WIDTH))


@dataclass(frozen=True, slots=True)
class CameraModel:
    """A pinhole camera's image and clipping (see the module docstring).

    Attributes:
        width, height: Pixels.
        horizontal_fov_deg: Horizontal field of view (degrees, below 180).
        near, far: Nearest and farthest surface seen, along the optical axis (m).
    """

    width: int
    height: int
    horizontal_fov_deg: float
    near: float = 0.1
    far: float = 1000.0

    @property
    def focal(self) -> float:
        """Focal length (pixels)."""
        return 0.5 * self.width / math.tan(0.5 * math.radians(self.horizontal_fov_deg))

    @property
    def center(self) -> tuple[float, float]:
        """The principal point (cx, cy) (pixels)."""
        return 0.5 * self.width, 0.5 * self.height

    @property
    def vertical_fov_deg(self) -> float:
        return math.degrees(2.0 * math.atan(0.5 * self.height / self.focal))

    def matrix(self) -> FloatArray:
        """(3, 3) intrinsic matrix K of OpenCV's optical frame (``(-y, -z, x)`` of ours)."""
        cx, cy = self.center
        return np.array([[self.focal, 0.0, cx], [0.0, self.focal, cy], [0.0, 0.0, 1.0]])

    def rays(self) -> FloatArray:
        """(H, W, 3) direction through each pixel's centre in the sensor frame, scaled to
        x = 1 (so that a hit at depth d lies at ``d * ray``)."""
        cx, cy = self.center
        u = np.arange(self.width) + 0.5
        v = np.arange(self.height) + 0.5
        out = np.empty((self.height, self.width, 3))
        out[..., 0] = 1.0
        out[..., 1] = ((cx - u) / self.focal)[None, :]
        out[..., 2] = ((cy - v) / self.focal)[:, None]
        return out

    def project(self, points: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
        """(u, v, depth) of (..., 3) sensor-frame points (pixels, pixels, m); points
        behind the camera (depth <= 0) get NaN pixel coordinates."""
        p = np.asarray(points, dtype=np.float64)
        x, y, z = p[..., 0], p[..., 1], p[..., 2]
        ahead = x > 0.0
        safe = np.where(ahead, x, 1.0)
        cx, cy = self.center
        u = np.where(ahead, cx - self.focal * y / safe, np.nan)
        v = np.where(ahead, cy - self.focal * z / safe, np.nan)
        return u, v, x

    def gl_projection(self) -> FloatArray:
        """(4, 4) OpenGL projection of the eye frame (`GL_EYE_FROM_SENSOR`) with the image
        rows upside down, so that a framebuffer's first row read back is the image's top
        row (the triangles' winding flips; nothing is culled by it)."""
        n, f = self.near, self.far
        out = np.zeros((4, 4))
        out[0, 0] = 2.0 * self.focal / self.width
        out[1, 1] = -2.0 * self.focal / self.height
        out[2, 2] = -(f + n) / (f - n)
        out[2, 3] = -2.0 * f * n / (f - n)
        out[3, 2] = -1.0
        return out


def _rgb(*values: float) -> Float32Array:
    return np.array(values, dtype=np.float32)


@dataclass(frozen=True, slots=True, eq=False)
class Lighting:
    """The sun and the sky (see the module docstring): radiances and irradiances are
    linear RGB.

    Attributes:
        sun_direction: (3,) unit vector to the sun, world frame.
        sun: (3,) irradiance of a surface facing the sun (0 at night).
        ambient: (3,) the sky's irradiance of a surface facing up.
        zenith, horizon: (3,) sky radiance straight up and at the horizon.
        ground: (3,) radiance below the horizon where nothing is hit.
        glow: (3,) radiance of the glow around the sun, at its centre.
        disc: (3,) radiance of the sun's disc.
    """

    sun_direction: FloatArray
    sun: Float32Array
    ambient: Float32Array
    zenith: Float32Array
    horizon: Float32Array
    ground: Float32Array
    glow: Float32Array
    disc: Float32Array
    disc_cos: float = field(default=math.cos(SUN_DISC_RADIUS))

    @classmethod
    def of(cls, azimuth_deg: float = 225.0, elevation_deg: float = 45.0) -> Lighting:
        """Daylight with the sun at an azimuth (counter-clockwise from x, east) and an
        elevation above the horizon (degrees)."""
        az, el = math.radians(azimuth_deg), math.radians(elevation_deg)
        direction = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
        # Full daylight from 15 degrees up; dusk below; the sky keeps 3% at night.
        day = min(max(math.sin(el) / math.sin(math.radians(15.0)), 0.0), 1.0)
        sky = 0.03 + 0.97 * day
        sun = day if el > 0.0 else 0.0
        return cls(
            direction,
            _rgb(2.0, 1.9, 1.75) * np.float32(sun),
            _rgb(0.32, 0.37, 0.46) * np.float32(sky),
            _rgb(0.10, 0.20, 0.55) * np.float32(sky),
            _rgb(0.42, 0.50, 0.65) * np.float32(sky),
            _rgb(0.10, 0.095, 0.09) * np.float32(sky),
            _rgb(1.0, 0.9, 0.7) * np.float32(sun),
            _rgb(2000.0, 1950.0, 1850.0) * np.float32(sun),
        )

    def sky(self, directions: FloatArray) -> Float32Array:
        """(N, 3) float32 radiance of the sky in (N, 3) unit world directions."""
        d = np.asarray(directions, dtype=np.float32)
        up = d[:, 2:3]
        t = np.sqrt(np.maximum(up, 0.0))
        out = np.where(up >= 0.0, self.horizon + (self.zenith - self.horizon) * t, self.ground)
        c = (d @ self.sun_direction.astype(np.float32))[:, None]
        out = out + self.glow * np.exp((c - np.float32(1.0)) * np.float32(_GLOW_K))
        out = out + np.where(c >= np.float32(self.disc_cos), self.disc, np.float32(0.0))
        sky: Float32Array = out.astype(np.float32)
        return sky

    def shade(self, albedo: Float32Array, normals: FloatArray, lit: npt.ArrayLike) -> Float32Array:
        """(N, 3) float32 radiance of N surfaces: (N, 3) albedo, (N, 3) unit normals facing
        the camera, (N,) share of the sun that reaches them."""
        n = np.asarray(normals, dtype=np.float32)
        direct = np.maximum(n @ self.sun_direction.astype(np.float32), 0.0)
        direct = direct * np.asarray(lit, dtype=np.float32)
        sky = np.float32(0.65) + np.float32(0.35) * n[:, 2]
        out = albedo * (self.sun * direct[:, None] + self.ambient * sky[:, None])
        return out.astype(np.float32)

    @property
    def night(self) -> bool:
        return not bool(np.any(self.sun > 0.0))


def tone_map(color: npt.ArrayLike, exposure: float = 1.0) -> npt.NDArray[np.uint8]:
    """(..., 3) linear radiance to 8-bit sRGB: exposure, ACES filmic curve, sRGB."""
    x = np.maximum(np.asarray(color, dtype=np.float32) * np.float32(exposure), 0.0)
    x = np.nan_to_num(x, nan=0.0, posinf=1e6)
    y = np.clip((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14), 0.0, 1.0)
    s = np.where(y <= 0.0031308, 12.92 * y, 1.055 * np.power(y, 1.0 / 2.4) - 0.055)
    out: npt.NDArray[np.uint8] = np.round(s * 255.0).astype(np.uint8)
    return out
