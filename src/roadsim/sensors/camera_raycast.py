"""The ray-cast camera: one Embree ray per pixel through `Scene.cast`.

It serves where no EGL context can be made, and cross-checks the raster camera
(`roadsim.sensors.raster`): both follow `roadsim.sensors.camera_model`. Each pixel's ray
starts on the near plane and ends on the far plane (along the optical axis, as the raster
camera clips), so that both see the same surfaces. A lit pixel (its normal towards the
sun) casts one more ray to the sun, `SHADOW_RAY_M` long at most, from
`SHADOW_OFFSET_M` off its surface: the raster camera's shadows reach only as far as its
shadow map (`roadsim.sensors.raster.SHADOW_HALF_SIZE_M`), these everywhere.
"""

from __future__ import annotations

import numpy as np

from roadsim._types import FloatArray
from roadsim.road.surface_classes import LOOK_ALBEDO
from roadsim.sensors.camera import Images, Shot
from roadsim.sensors.camera_model import CameraModel
from roadsim.sensors.scene import Scene

__all__ = ["SHADOW_OFFSET_M", "SHADOW_RAY_M", "RaycastRenderer"]

#: How far a shadow ray reaches towards the sun (m).
SHADOW_RAY_M = 1000.0
#: How far off its surface a shadow ray starts (m).
SHADOW_OFFSET_M = 1e-2


class RaycastRenderer:
    """Camera images by ray casting (see the module docstring)."""

    name = "raycast"
    description = "Embree ray casting on the CPU"

    def __init__(self) -> None:
        self._rays: dict[CameraModel, tuple[FloatArray, FloatArray]] = {}

    def _pixel_rays(self, model: CameraModel) -> tuple[FloatArray, FloatArray]:
        """(H W, 3) unit directions (sensor frame) and (H W,) their x components."""
        found = self._rays.get(model)
        if found is None:
            rays = model.rays().reshape(-1, 3)
            norm = np.sqrt(np.einsum("ij,ij->i", rays, rays))
            found = self._rays[model] = (rays / norm[:, None], 1.0 / norm)
        return found

    def render(self, scene: Scene, shot: Shot) -> Images:
        model, pose, light = shot.model, shot.pose, shot.lighting
        h, w = model.height, model.width
        unit, along = self._pixel_rays(model)
        d = unit @ pose.rotation.T
        start = model.near / along  # from the near plane ...
        end = model.far / along  # ... to the far plane
        hits = scene.cast(
            pose.position + start[:, None] * d, d, end - start, ignore_actor=shot.ignore_actor
        )
        valid = hits.valid
        distance = hits.distance + start
        depth = np.where(valid, distance * along, np.inf).astype(np.float32)
        color = np.empty((h * w, 3), dtype=np.float32)
        sky = ~valid
        color[sky] = light.sky(d[sky])
        seen = np.flatnonzero(valid)
        normals = hits.normal[seen]
        lit = np.ones(len(seen), dtype=np.float32)
        if shot.shadows and not light.night:
            facing = np.flatnonzero(normals @ light.sun_direction > 0.0)
            rows = seen[facing]
            points = pose.position + distance[rows, None] * d[rows]
            to_sun = np.broadcast_to(light.sun_direction, (len(rows), 3))
            blocked = scene.cast(
                points + SHADOW_OFFSET_M * normals[facing], to_sun, SHADOW_RAY_M
            ).valid
            lit[facing[blocked]] = 0.0
        albedo = LOOK_ALBEDO.take(hits.look[seen], axis=0, mode="clip")
        color[seen] = light.shade(albedo, normals, lit)
        return Images(
            color.reshape(h, w, 3),
            depth.reshape(h, w),
            hits.surface.reshape(h, w),
            hits.actor.astype(np.int32).reshape(h, w),
        )

    def close(self) -> None:
        self._rays.clear()
