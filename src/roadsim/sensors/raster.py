"""The raster camera: OpenGL 3.3 through moderngl on a headless EGL context.

On a machine without a GPU, Mesa's llvmpipe renders (on the CPU, with threads); with a
GPU and its EGL driver, the GPU. One context per renderer (per simulation); every call
makes it current on the calling thread and releases it, so that several simulations
(and threads) may each have one.

The scene's triangles go to the GPU indexed (`vertex_data`): each triangle's last corner,
its provoking vertex, is a vertex of its own with the triangle's flat normal, surface
class, look (its albedo: `roadsim.road.surface_classes.LOOK_ALBEDO`) and actor id, which
the fragment shader takes flat; its other corners share vertices at the same points. The
static mesh goes once per scene, the moving mesh each time the scene is updated. On
llvmpipe, vertex shading, clipping and triangle set-up run on one thread, whatever the
image size: hence few vertices, and few outputs for each (`_MAIN_VERTEX`). Positions are
in the scene's local frame (`Scene.origin`, as the ray caster's), in float32, and the
camera's position is subtracted in the vertex shader, so that a georeferenced map keeps
millimetres.

A shot is three passes into float32 render targets:

1. the sun's shadow maps (if ``shadows``): depth from the sun, orthographic, over a
   square of ground around a point ahead of the camera (`SHADOW_HALF_SIZE_M` a half side
   at least); outside it, nothing is in shadow. The sun and the static mesh never move,
   so the static mesh's map is drawn once per square and kept (`_ShadowMaps`): the
   square's centre snaps to a grid of `SHADOW_SNAP_M` in the sun's frame, so a new one is
   drawn only when the camera has moved about that far. At every shot, the static map is
   copied into a second map of the same square and the moving actors (a few thousand
   triangles) are drawn into that copy, which the scene's shader looks up: one look-up of
   both (an actor's shadow on the road, a building's on an actor);
2. the scene, with a depth buffer: colour (`roadsim.sensors.camera_model`'s shading),
   depth along the optical axis (written per fragment where the pixel's ray meets its
   triangle's plane, not read back from the depth buffer nor interpolated across the
   triangle, so it keeps float32 precision however large the triangle) and the surface
   class and actor id packed into one integer (`unpack_ids`): three attachments (on
   llvmpipe each costs time in every full-screen pass). The triangles of the actor the
   camera rides on are moved out of the clip volume in the vertex shader, so they draw
   nothing;
3. the sky, a full-screen triangle on the far plane where no surface is: the sky's
   radiance, depth +inf, class 0, actor -1.

The projection draws the image upside down, so that rows read back top first
(`CameraModel.gl_projection`).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from roadsim._types import Int32Array, UInt8Array
from roadsim.errors import ArgumentError
from roadsim.road.surface_classes import LOOK_ALBEDO
from roadsim.sensors.camera import Images, RendererUnavailable, Shot
from roadsim.sensors.camera_model import GL_EYE_FROM_SENSOR, CameraModel, Lighting
from roadsim.sensors.scene import Scene, SceneMesh

__all__ = [
    "MAX_ACTOR_ID",
    "SHADOW_HALF_SIZE_M",
    "SHADOW_MAP_HALF_SIZE_M",
    "SHADOW_MAP_SIZE",
    "SHADOW_SNAP_M",
    "STATIC_SHADOW_MAPS",
    "MeshData",
    "MeshLayout",
    "RasterRenderer",
    "unpack_ids",
    "vertex_data",
    "vertex_layout",
]

#: Half the side of the square of ground a shot's shadows cover at least (m); its centre
#: lies this far ahead of the camera, at its height.
SHADOW_HALF_SIZE_M = 60.0
#: The grid (m, in the sun's frame) a shadow map's centre snaps to, so that the static
#: mesh's map serves every shot whose square lies in it; the maps are this much larger.
SHADOW_SNAP_M = 20.0
#: Half the side of the square a shadow map covers (m).
SHADOW_MAP_HALF_SIZE_M = SHADOW_HALF_SIZE_M + 0.5 * SHADOW_SNAP_M
#: Texels along a side of each shadow map (11.7 cm texels). Drawing the static mesh's map
#: costs as much as a frame without shadows on llvmpipe; the shot's map costs a copy of it
#: (7 MB with its unused colour target, 0.5 ms here) and a few thousand triangles.
SHADOW_MAP_SIZE = 1200
#: The static mesh's shadow maps kept (one per square; several cameras may each need one).
STATIC_SHADOW_MAPS = 4
#: Half the depth the shadow map covers along the sun's rays (m).
_SHADOW_DEPTH_M = 500.0
#: How much nearer to the sun a surface must be than the one in the shadow map to shade it
#: (depth units of the shadow map: 1 m is 1 / (2 x 500)), besides the slope-scaled offset.
_SHADOW_BIAS = 2e-5

#: The largest actor id the ids target holds (its top 24 bits, signed: -1 is none).
MAX_ACTOR_ID = (1 << 23) - 1

#: One vertex: position (scene frame), its triangle's unit normal, class and look
#: (``class | look << 8``) and actor.
VERTEX = np.dtype([("position", "<f4", 3), ("normal", "<f4", 3), ("ids", "<i4", 2)])
_FORMAT = "3f 3f 2i"
_ATTRIBUTES = ("in_position", "in_normal", "in_ids")

#: The scene's vertex shader, compiled with and without shadows (SHADOWS 1 or 0, as the
#: fragment shader). Every triangle is flat (one normal, one class, one look), so what
#: does not vary across it is worked out here and handed to the fragment shader flat:
#: its light, the coefficients of its inverse depth and its packed ids. On llvmpipe a
#: shot's time goes to the fragments (in blocks of 4 x 4, partly covered ones too) and to
#: each vertex's outputs (copied, clipped and set up for every triangle, in slots of four
#: floats), so the fragment shader keeps only what changes from pixel to pixel and the
#: outputs fill two flat slots: colour (three floats or, with shadows, four) and inverse
#: depth (three floats) with the ids. The shadow maps' coordinates are affine in the
#: position, so that they are interpolated exactly (one more slot).
_MAIN_VERTEX = """
#version 330
#define SHADOWS %(shadows)d
uniform mat4 u_light;
uniform mat4 u_projection;
uniform mat3 u_eye;
uniform vec3 u_camera;
uniform int u_ignore;
uniform mat3 u_rotation;
uniform float u_focal;
uniform vec3 u_sun_direction;
uniform vec3 u_sun;
uniform vec3 u_ambient;
uniform vec3 u_albedo[%(looks)d];  // by look
in vec3 in_position;
in vec3 in_normal;
in ivec2 in_ids;
#if SHADOWS
flat out vec4 v_color;  // (albedo x sky light, sun light / sky light): see the fragment shader
out vec3 v_light;
#else
flat out vec3 v_color;  // the radiance
#endif
flat out vec3 v_inverse_depth;  // 1 / depth = x + y (center - window).x + z (...).y
flat out int v_ids;  // actor << 8 | class
void main() {
#if SHADOWS
    v_light = (u_light * vec4(in_position, 1.0)).xyz * 0.5 + 0.5;
#endif
    vec3 offset = in_position - u_camera;
    float plane = dot(in_normal, offset);  // the triangle's plane: n . (p - camera)
    gl_Position = u_projection * vec4(u_eye * offset, 1.0);
    if (u_ignore >= 0 && in_ids.y == u_ignore) {
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0);  // out of the clip volume: not drawn
    }
    vec3 n = plane > 0.0 ? -in_normal : in_normal;  // the side the camera sees
    vec3 albedo = u_albedo[min(in_ids.x >> 8, %(looks)d - 1)];
    float sky = 0.65 + 0.35 * n.z;  // (0.3 at least)
    float sun = max(dot(n, u_sun_direction), 0.0);
#if SHADOWS
    v_color = vec4(albedo * sky, sun / sky);
#else
    v_color = albedo * (u_ambient * sky + u_sun * sun);
#endif
    // The pixel's ray (sensor frame (1, (center - window) / focal)) meets the plane at
    // depth plane / (n . ray): its inverse is affine in the window position.
    vec3 normal = in_normal * u_rotation;  // (the sensor frame)
    // (None for a plane through the camera, or no plane: a corner that is not the
    // provoking vertex may have no normal. The fragment shader then takes 1 / w.)
    v_inverse_depth = plane != 0.0 ? vec3(normal.x, normal.yz / u_focal) / plane : vec3(0.0);
    v_ids = (in_ids.y << 8) | (in_ids.x & 255);
}
"""

#: The scene's fragment shader, compiled twice: with the shadow look-up (SHADOWS 1) and
#: without (SHADOWS 0). One program with a uniform switch would not do: llvmpipe runs
#: both sides of a branch for every fragment, masked, so the look-up would cost as much
#: when off.
_MAIN_FRAGMENT = """
#version 330
#define SHADOWS %(shadows)d
uniform float u_bias;
uniform sampler2DShadow u_shadow;
uniform vec3 u_sun;
uniform vec3 u_ambient;
uniform vec2 u_center;
#if SHADOWS
flat in vec4 v_color;
in vec3 v_light;
#else
flat in vec3 v_color;
#endif
flat in vec3 v_inverse_depth;
flat in int v_ids;
layout(location = 0) out vec4 out_color;
layout(location = 1) out float out_depth;
layout(location = 2) out int out_ids;
void main() {
#if SHADOWS
    vec3 at = vec3(v_light.xy, v_light.z - u_bias);
    float lit = texture(u_shadow, at);
    // Outside the maps' square nothing is in shadow (no branch: llvmpipe runs both sides).
    bool inside = all(greaterThan(v_light, vec3(0.0))) && all(lessThan(v_light, vec3(1.0)));
    out_color = vec4(v_color.rgb * (u_ambient + u_sun * (v_color.a * (inside ? lit : 1.0))), 1.0);
#else
    out_color = vec4(v_color, 1.0);
#endif
    // Depth along the optical axis from the triangle's plane: as exact as float32 however
    // large the triangle, where the interpolated one is not (on NVIDIA's driver, 1.7 cm
    // at 40 m across a 1 km triangle). Edge on (the camera in the plane: no inverse
    // depth, or none above 1e-30), the interpolated eye depth (1 / w) serves. (One
    // division for both.)
    float inverse = v_inverse_depth.x + dot(v_inverse_depth.yz, u_center - gl_FragCoord.xy);
    out_depth = 1.0 / (inverse > 1e-30 ? inverse : gl_FragCoord.w);
    out_ids = v_ids;
}
"""

_SHADOW_VERTEX = """
#version 330
uniform mat4 u_light;
in vec3 in_position;
void main() {
    gl_Position = u_light * vec4(in_position, 1.0);
}
"""

_SHADOW_FRAGMENT = """
#version 330
void main() {
}
"""

_SKY_VERTEX = """
#version 330
uniform mat3 u_rotation;
uniform vec2 u_center;
uniform vec2 u_size;
uniform float u_focal;
in vec2 in_corner;
out vec3 v_ray;
void main() {
    gl_Position = vec4(in_corner, 1.0, 1.0);  // on the far plane
    // The pixel ray (sensor frame, x = 1) is linear in the window coordinates, so it is
    // interpolated exactly; the image is drawn upside down (gl_FragCoord is (u, v)).
    vec2 window = (in_corner * 0.5 + 0.5) * u_size;
    v_ray = u_rotation * vec3(1.0, (u_center - window) / u_focal);
}
"""

_SKY_FRAGMENT = """
#version 330
uniform vec3 u_sun_direction;
uniform vec3 u_zenith;
uniform vec3 u_horizon;
uniform vec3 u_ground;
uniform vec3 u_glow;
uniform vec3 u_disc;
uniform float u_disc_cos;
uniform float u_glow_width;  // 1 / (1 - cos(the glow's width))
in vec3 v_ray;
layout(location = 0) out vec4 out_color;
layout(location = 1) out float out_depth;
layout(location = 2) out int out_ids;
void main() {
    vec3 d = normalize(v_ray);
    vec3 sky = d.z >= 0.0 ? u_horizon + (u_zenith - u_horizon) * sqrt(d.z) : u_ground;
    float c = dot(d, u_sun_direction);
    sky += u_glow * exp((c - 1.0) * u_glow_width);
    if (c >= u_disc_cos) {
        sky += u_disc;
    }
    out_color = vec4(sky, 1.0);
    out_depth = uintBitsToFloat(0x7F800000u);  // +inf
    out_ids = -256;  // actor -1, class 0
}
"""


class MeshData(NamedTuple):
    """A mesh as drawn: `VERTEX` records and, three per triangle, their indices."""

    vertices: npt.NDArray[np.void]
    indices: npt.NDArray[np.uint32]


class MeshLayout(NamedTuple):
    """All of a mesh's `vertex_data` but positions and normals, which change as its actors
    move: the mesh vertex each record stands at, the records' ids and the indices."""

    source: npt.NDArray[np.intp]
    ids: npt.NDArray[np.int32]
    indices: npt.NDArray[np.uint32]

    def fits(self, mesh: SceneMesh, of: SceneMesh) -> bool:
        """Whether it is also ``mesh``'s layout, being that of ``of``: the same triangles
        of the same actors, classes and looks over as many vertices (the moving mesh from
        one frame to the next while no actor comes or goes)."""
        return len(mesh.vertices) == len(of.vertices) and all(
            np.array_equal(a, b)
            for a, b in (
                (mesh.triangles, of.triangles),
                (mesh.actor, of.actor),
                (mesh.surface, of.surface),
                (mesh.look, of.look),
            )
        )


def vertex_layout(mesh: SceneMesh) -> MeshLayout:
    """The records and indices of a mesh's T triangles, but their positions and normals
    (`vertex_data`).

    A triangle's last corner is a record of its own (record t of triangle t): its
    provoking vertex (OpenGL's default), whose outputs the fragment shader takes flat, so
    it carries the triangle's normal, class, look and actor. The other two corners share
    a record at the same point of the same actor: another triangle's last corner where
    there is one, else one more record (its normal and class unused). Un-indexed, every
    corner would be shaded on its own; on llvmpipe vertex shading runs on one thread.

    Raises:
        ArgumentError: An actor id above `MAX_ACTOR_ID` (the ids target holds no more).
    """
    if len(mesh.actor) and int(mesh.actor.max()) > MAX_ACTOR_ID:
        raise ArgumentError(
            f"the raster camera draws actor ids up to {MAX_ACTOR_ID}, not "
            f"{int(mesh.actor.max())}; use renderer: raycast"
        )
    tri = mesh.triangles
    t = len(tri)
    # For each mesh vertex, a triangle whose last corner it is (-1: none).
    last = np.full(len(mesh.vertices), -1, dtype=np.int64)
    last[tri[:, 2]] = np.arange(t)
    wanted = tri[:, :2].ravel()
    actor = np.repeat(mesh.actor, 2)
    shared = last[wanted]
    found = shared >= 0
    found[found] = mesh.actor[shared[found]] == actor[found]
    # The rest (never a last corner, or only another actor's): records of their own, one
    # per vertex and actor (+1, below 2 ** 24).
    keys = (wanted[~found].astype(np.int64) << 25) | (actor[~found] + 1)
    extra = np.unique(keys)
    shared[~found] = t + np.searchsorted(extra, keys)
    source = np.concatenate((tri[:, 2], extra >> 25)).astype(np.intp)
    ids = np.zeros((t + len(extra), 2), dtype=np.int32)
    ids[:t, 0] = mesh.surface.astype(np.int32) | mesh.look.astype(np.int32) << 8
    ids[:t, 1] = mesh.actor
    ids[t:, 1] = (extra & ((1 << 25) - 1)) - 1
    indices = np.empty((t, 3), dtype=np.uint32)
    indices[:, :2] = shared.reshape(t, 2)
    indices[:, 2] = np.arange(t)
    return MeshLayout(source, ids, indices.reshape(-1))


def vertex_data(
    mesh: SceneMesh, origin: npt.ArrayLike, layout: MeshLayout | None = None
) -> MeshData:
    """The records and indices of a mesh's T triangles, positions relative to ``origin``
    (the records as `vertex_layout` lays them out: ``layout``, where it is known to be the
    mesh's, else worked out).

    Raises:
        ArgumentError: An actor id above `MAX_ACTOR_ID` (the ids target holds no more).
    """
    if layout is None:
        layout = vertex_layout(mesh)
    local = mesh.vertices - np.asarray(origin, dtype=np.float64)  # (V, 3)
    tri = mesh.triangles
    # (Component by component: np.cross and fancy indexing cost twice as much a frame.)
    p0, p1, p2 = (local.take(tri[:, k], axis=0) for k in range(3))
    a, b = (p1 - p0).T, (p2 - p0).T
    n = np.stack(
        (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]), axis=1
    )
    norm = np.sqrt(np.einsum("ij,ij->i", n, n))
    n /= np.where(norm > 0.0, norm, 1.0)[:, None]
    out = np.zeros(len(layout.source), dtype=VERTEX)
    out["position"] = local.take(layout.source, axis=0)
    out["normal"][: len(n)] = n
    out["ids"] = layout.ids
    return MeshData(out, layout.indices)


class _Mesh:
    """A mesh's vertices and indices on the GPU, with a vertex array for each program."""

    def __init__(self, ctx: Any, programs: tuple[Any, Any, Any], data: MeshData) -> None:
        self.capacity = (max(len(data.vertices), 1), max(len(data.indices), 1))
        self.buffer = ctx.buffer(reserve=self.capacity[0] * VERTEX.itemsize, dynamic=True)
        self.indices = ctx.buffer(reserve=self.capacity[1] * 4, dynamic=True)
        self.count = 0
        self.write(data)
        lit, unlit, shadow = programs

        def array(program: Any, *content: Any) -> Any:
            return ctx.vertex_array(
                program, [content], index_buffer=self.indices, index_element_size=4
            )

        # The scene's program with shadows, without, and the shadow map's.
        self.main = {
            True: array(lit, self.buffer, _FORMAT, *_ATTRIBUTES),
            False: array(unlit, self.buffer, _FORMAT, *_ATTRIBUTES),
        }
        self.shadow = array(shadow, self.buffer, "3f 20x", "in_position")

    def write(self, data: MeshData, indices: bool = True) -> bool:
        """Replaces the mesh (its records only, where not ``indices``: the same layout);
        False if it does not fit (make a new `_Mesh`)."""
        if len(data.vertices) > self.capacity[0] or len(data.indices) > self.capacity[1]:
            return False
        self.count = len(data.indices)  # (vertices drawn)
        if self.count:
            self.buffer.write(data.vertices)
            if indices:
                self.indices.write(data.indices)
        return True

    def release(self) -> None:
        for vao in self.main.values():
            vao.release()
        self.shadow.release()
        self.indices.release()
        self.buffer.release()


class _ShadowMap:
    """A depth texture the sun's view is drawn into (compared, filtered: 2 x 2 texels).

    Its framebuffer has a colour target too (one byte a texel, masked: never drawn), for
    `moderngl.Context.copy_framebuffer` copies the depth along with each colour target
    and not without one."""

    def __init__(self, ctx: Any, gl: Any) -> None:
        size = (SHADOW_MAP_SIZE, SHADOW_MAP_SIZE)
        self.texture = ctx.depth_texture(size)
        self.texture.compare_func = "<="
        self.texture.filter = (gl.LINEAR, gl.LINEAR)
        self.color = ctx.renderbuffer(size, 1, dtype="f1")
        self.fbo = ctx.framebuffer([self.color], self.texture)
        self.fbo.color_mask = (False, False, False, False)

    def release(self) -> None:
        self.fbo.release()
        self.color.release()
        self.texture.release()


class _ShadowMaps:
    """The static mesh's shadow maps, by square (`_shadow_square`'s key; the last
    `STATIC_SHADOW_MAPS` used), and the map of a shot: a copy of the static one with the
    moving actors drawn into it."""

    def __init__(self, ctx: Any, gl: Any) -> None:
        self._ctx, self._gl = ctx, gl
        self.static: dict[tuple[float, ...], _ShadowMap] = {}
        self.shot = _ShadowMap(ctx, gl)

    def static_map(self, key: tuple[float, ...]) -> tuple[_ShadowMap, bool]:
        """The static map of a square, and whether it is new (to be drawn)."""
        found = self.static.pop(key, None)
        new = found is None
        if found is None:
            if len(self.static) >= STATIC_SHADOW_MAPS:
                oldest = next(iter(self.static))
                found = self.static.pop(oldest)  # (its texture, drawn over)
            else:
                found = _ShadowMap(self._ctx, self._gl)
        self.static[key] = found  # (the last used, last)
        return found, new

    def forget_static(self) -> None:
        """Drops the static maps (the static mesh changed)."""
        for m in self.static.values():
            m.release()
        self.static.clear()

    def release(self) -> None:
        self.forget_static()
        self.shot.release()


class _Targets:
    """The framebuffer of one image size: colour (RGB32F, radiance; RGBA32F where the
    driver cannot draw into RGB32F), depth along the optical axis (R32F) and ids (R32I:
    class and actor, `unpack_ids`).

    The colour target has the image's three channels, so that reading it back is a copy:
    from RGBA32F, llvmpipe converts every pixel (1 ms a 640 x 480 image here, against
    0.3). Class and actor share a target: on llvmpipe each attachment costs time in every
    pass. Depth keeps its own: in the colour's alpha, reading the colour back as RGB would
    take a second read or a strided copy, which costs more than the target.

    The ids are read back into an array kept here (``ids``) and unpacked from it into new
    ones: reading into new memory costs its first touch of every page (0.5 ms a shot for
    640 x 480 here), which the unpacking pays anyway."""

    def __init__(self, ctx: Any, gl: Any, size: tuple[int, int]) -> None:
        self.size = size
        self.depth = ctx.depth_renderbuffer(size)
        others = (ctx.renderbuffer(size, 1, dtype="f4"), ctx.renderbuffer(size, 1, dtype="i4"))
        # (RGB32F need not be renderable in OpenGL 3.3: moderngl raises where the
        # framebuffer is incomplete.)
        for channels in (3, 4):
            color = ctx.renderbuffer(size, channels, dtype="f4")
            try:
                self.fbo = ctx.framebuffer((color, *others), self.depth)
            except gl.Error:
                color.release()
                if channels == 4:
                    raise
            else:
                break
        self.attachments = (color, *others)
        self.depth_only = ctx.framebuffer((), self.depth)
        self.ids = np.empty(size[::-1], dtype=np.int32)

    def release(self) -> None:
        self.fbo.release()
        self.depth_only.release()
        self.depth.release()
        for a in self.attachments:
            a.release()


class RasterRenderer:
    """Camera images rasterised by OpenGL (see the module docstring).

    Raises:
        RendererUnavailable: Without moderngl, or where no EGL context can be made.
    """

    name = "raster"

    def __init__(self) -> None:
        try:
            import moderngl
        except ImportError as exc:  # pragma: no cover - moderngl is a dependency
            raise RendererUnavailable(
                "the raster camera needs moderngl (pip install moderngl)"
            ) from exc
        try:
            gl: Any = moderngl  # (its stubs type backend= as a dict)
            ctx: Any = gl.create_context(standalone=True, backend="egl", require=330)
        except Exception as exc:  # glcontext raises plain Exceptions
            raise RendererUnavailable(
                f"no EGL context could be made ({exc}); on Debian or Ubuntu, install "
                "libegl1, libgl1, libegl-mesa0 and libgl1-mesa-dri"
            ) from exc
        self._gl: Any = moderngl
        self._ctx: Any = ctx
        # The context (and llvmpipe's threads) go with the renderer, closed or not.
        self._release = weakref.finalize(self, ctx.release)
        self.description = f"moderngl on EGL ({ctx.info['GL_RENDERER']})"
        with ctx:
            looks = len(LOOK_ALBEDO)
            self._main: dict[bool, Any] = {}
            for shadows in (True, False):
                main = self._main[shadows] = ctx.program(
                    vertex_shader=_MAIN_VERTEX % {"looks": looks, "shadows": shadows},
                    fragment_shader=_MAIN_FRAGMENT % {"shadows": shadows},
                )
                main["u_albedo"].write(LOOK_ALBEDO.astype("f4").tobytes())
            self._main[True]["u_shadow"].value = 0
            self._shadow_program: Any = ctx.program(
                vertex_shader=_SHADOW_VERTEX, fragment_shader=_SHADOW_FRAGMENT
            )
            self._sky: Any = ctx.program(vertex_shader=_SKY_VERTEX, fragment_shader=_SKY_FRAGMENT)
            corners = np.array([-1.0, -1.0, 3.0, -1.0, -1.0, 3.0], dtype="f4")
            self._sky_buffer = ctx.buffer(corners.tobytes())
            self._sky_vao = ctx.vertex_array(self._sky, [(self._sky_buffer, "2f", "in_corner")])
            self._shadows = _ShadowMaps(ctx, moderngl)
        #: How many times the static mesh's shadow map has been drawn (a new square).
        self.static_shadow_draws = 0
        self._targets: dict[tuple[int, int], _Targets] = {}
        self._scene_static: SceneMesh | None = None
        self._scene_moving: SceneMesh | None = None
        self._moving_layout: MeshLayout | None = None
        self._static: _Mesh | None = None
        self._moving: _Mesh | None = None

    # -- meshes ----------------------------------------------------------------------------------

    def _upload(self, scene: Scene) -> None:
        programs = (self._main[True], self._main[False], self._shadow_program)
        if self._scene_static is not scene.static or self._static is None:
            if self._static is not None:
                self._static.release()
            self._static = _Mesh(self._ctx, programs, vertex_data(scene.static, scene.origin))
            self._scene_static = scene.static
            self._scene_moving = None
            self._shadows.forget_static()
        if self._scene_moving is not scene.moving or self._moving is None:
            # From frame to frame the actors move and their triangles stay: the last
            # moving mesh's layout serves again while none comes or goes.
            last, layout = self._scene_moving, self._moving_layout
            same = last is not None and layout is not None and layout.fits(scene.moving, last)
            if layout is None or not same:
                layout = self._moving_layout = vertex_layout(scene.moving)
            data = vertex_data(scene.moving, scene.origin, layout)
            if self._moving is None or not self._moving.write(data, indices=not same):
                if self._moving is not None:
                    self._moving.release()
                self._moving = _Mesh(self._ctx, programs, data)
            self._scene_moving = scene.moving

    def _draw(self, lit: bool) -> None:
        """Draws both meshes into the scene's targets, with shadows (``lit``) or without."""
        for mesh in (self._static, self._moving):
            if mesh is not None and mesh.count:
                mesh.main[lit].render(self._gl.TRIANGLES, vertices=mesh.count)

    def _draw_shadows(self, light_matrix: Any, key: tuple[float, ...]) -> None:
        """Draws the shot's shadow map of a square: the static mesh's (drawn first if it
        is not kept), copied, and the moving actors into the copy (see the module
        docstring); binds it for the scene's shader."""
        ctx, gl = self._ctx, self._gl
        self._shadow_program["u_light"].write(_mat4(light_matrix))
        ctx.depth_func = "<"
        ctx.polygon_offset = (2.0, 4.0)
        static, new = self._shadows.static_map(key)
        if new:
            static.fbo.use()
            static.fbo.clear(depth=1.0)
            if self._static is not None and self._static.count:
                self._static.shadow.render(gl.TRIANGLES, vertices=self._static.count)
        self.static_shadow_draws += new
        shot = self._shadows.shot
        ctx.copy_framebuffer(shot.fbo, static.fbo)
        shot.fbo.use()
        if self._moving is not None and self._moving.count:
            self._moving.shadow.render(gl.TRIANGLES, vertices=self._moving.count)
        ctx.polygon_offset = (0.0, 0.0)
        shot.texture.use(location=0)

    # -- a shot ----------------------------------------------------------------------------------

    def render(self, scene: Scene, shot: Shot) -> Images:
        with self._ctx:
            *_, (_, images) = self._stages(scene, shot)
        assert images is not None
        return images

    def _stages(self, scene: Scene, shot: Shot) -> Iterator[tuple[str, Images | None]]:
        """A shot, stage by stage (the context current): each stage's name once its
        commands are issued, and the images after the last (``read back``).
        `benchmarks/bench_camera.py` times them apart."""
        ctx = self._ctx
        model, pose, light = shot.model, shot.pose, shot.lighting
        size = (model.width, model.height)
        camera = pose.position - scene.origin
        self._upload(scene)
        yield "upload", None
        ctx.enable(self._gl.DEPTH_TEST)
        shadows = shot.shadows and not light.night
        if shadows:
            key, light_matrix = _shadow_square(camera, pose.rotation[:, 0], light)
            self._draw_shadows(light_matrix, key)
        yield "shadow maps", None
        targets = self._targets.get(size)
        if targets is None:
            targets = self._targets[size] = _Targets(ctx, self._gl, size)
        targets.depth_only.clear(depth=1.0)
        targets.fbo.use()
        main = self._main[shadows]
        main["u_projection"].write(_mat4(model.gl_projection()))
        main["u_eye"].write(_mat3(GL_EYE_FROM_SENSOR @ pose.rotation.T))
        main["u_camera"].value = tuple(camera.tolist())
        main["u_ignore"].value = int(shot.ignore_actor)
        main["u_rotation"].write(_mat3(pose.rotation))
        main["u_center"].value = model.center
        main["u_focal"].value = model.focal
        main["u_sun_direction"].value = tuple(light.sun_direction.tolist())
        main["u_sun"].value = tuple(light.sun.tolist())
        main["u_ambient"].value = tuple(light.ambient.tolist())
        if shadows:
            main["u_light"].write(_mat4(light_matrix))
            main["u_bias"].value = _SHADOW_BIAS
        ctx.depth_func = "<"
        self._draw(lit=shadows)
        yield "scene", None
        self._draw_sky(model, pose.rotation, light)
        yield "sky", None
        yield "read back", self._read(targets, model)

    def _draw_sky(self, model: CameraModel, rotation: Any, light: Lighting) -> None:
        from roadsim.sensors.camera_model import SUN_GLOW_WIDTH

        sky = self._sky
        sky["u_rotation"].write(_mat3(rotation))
        sky["u_center"].value = model.center
        sky["u_focal"].value = model.focal
        sky["u_size"].value = (float(model.width), float(model.height))
        for key, value in (
            ("u_sun_direction", light.sun_direction),
            ("u_zenith", light.zenith),
            ("u_horizon", light.horizon),
            ("u_ground", light.ground),
            ("u_glow", light.glow),
            ("u_disc", light.disc),
        ):
            sky[key].value = tuple(float(v) for v in value)
        sky["u_disc_cos"].value = light.disc_cos
        sky["u_glow_width"].value = 1.0 / (1.0 - math.cos(SUN_GLOW_WIDTH))
        self._ctx.depth_func = "<="  # where the depth buffer is still clear (1)
        self._sky_vao.render(self._gl.TRIANGLES, vertices=3)

    @staticmethod
    def _read(targets: _Targets, model: CameraModel) -> Images:
        h, w = model.height, model.width
        fbo = targets.fbo
        color = np.empty((h, w, 3), dtype=np.float32)
        depth = np.empty((h, w), dtype=np.float32)
        fbo.read_into(color, components=3, attachment=0, dtype="f4")
        fbo.read_into(depth, components=1, attachment=1, dtype="f4")
        fbo.read_into(targets.ids, components=1, attachment=2, dtype="i4")
        surface, actor = unpack_ids(targets.ids)
        return Images(color, depth, surface, actor)

    def close(self) -> None:
        """Releases the GL context and everything in it."""
        if not self._release.alive:
            return
        with self._ctx:
            for t in self._targets.values():
                t.release()
            for mesh in (self._static, self._moving):
                if mesh is not None:
                    mesh.release()
            self._shadows.release()
        self._targets.clear()
        self._static = self._moving = None
        self._scene_static = self._scene_moving = None
        self._release()


def unpack_ids(ids: npt.NDArray[np.int32]) -> tuple[UInt8Array, Int32Array]:
    """The surface class (uint8) and the actor id (int32, -1 for none) of each pixel of
    the ids target, which holds ``actor << 8 | class``: actor ids up to `MAX_ACTOR_ID`.
    One pass over the pixels for each (the low byte; an arithmetic shift keeps -1)."""
    surface: UInt8Array = ids.astype(np.uint8)  # (integer casts keep the low bits)
    actor: Int32Array = ids >> 8
    return surface, actor


def _shadow_square(camera: Any, forward: Any, light: Lighting) -> tuple[tuple[float, ...], Any]:
    """The square of ground a shot's shadow maps cover: its key (the sun's direction and
    the grid cell of the square's centre) and (4, 4) the maps' clip coordinates from the
    scene frame.

    The maps look along the sun's rays, orthographic, over a square of
    `SHADOW_MAP_HALF_SIZE_M` around the point of a grid of `SHADOW_SNAP_M` (in the sun's
    frame, depth included) nearest the point `SHADOW_HALF_SIZE_M` ahead of the camera (on
    its heading, at its height): the square of `SHADOW_HALF_SIZE_M` around that point
    lies inside it. The matrix follows from the key alone, so that a kept map and a shot
    agree on it.
    """
    s = light.sun_direction
    ahead = np.array([forward[0], forward[1], 0.0])
    norm = float(np.hypot(ahead[0], ahead[1]))
    center = camera + (SHADOW_HALF_SIZE_M / norm * ahead if norm > 1e-6 else 0.0)
    up = np.array([0.0, 0.0, 1.0]) if abs(s[2]) < 0.99 else np.array([1.0, 0.0, 0.0])
    ex = np.cross(up, s)
    ex /= np.linalg.norm(ex)
    ey = np.cross(s, ex)
    basis = np.stack((ex, ey, s))
    cell = np.round(basis @ center / SHADOW_SNAP_M)
    half = SHADOW_MAP_HALF_SIZE_M
    scale = np.diag([1.0 / half, 1.0 / half, -1.0 / _SHADOW_DEPTH_M])
    out = np.eye(4)
    out[:3, :3] = scale @ basis
    out[:3, 3] = -(scale @ (cell * SHADOW_SNAP_M))
    return (*(float(v) for v in s), *(float(c) for c in cell)), out


def _mat4(m: Any) -> bytes:
    """A 4 x 4 matrix for GLSL (column-major float32)."""
    return np.asarray(m, dtype="f4").T.tobytes()


def _mat3(m: Any) -> bytes:
    return np.asarray(m, dtype="f4").T.tobytes()
