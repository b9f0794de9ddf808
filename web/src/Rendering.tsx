// The rendering component: draws the simulation with three.js from the three feeds.
// On mount it creates the scene, renderer and camera, the lights, and the shared geometries
// and materials (inside SceneUpdater); on new props it updates the scene (SceneUpdater.update)
// and every animation frame moves the objects between the last two feed frames.
import { useEffect, useRef } from "react";
import * as THREE from "three";
import { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";
import type { EgoSensor, LaneSensor, Sensors } from "./protocol";
import { DetailPicker } from "./scene/detail";
import type { DrawKind } from "./scene/draws";
import { toThree } from "./scene/frames";
import { COLORS, SceneUpdater, type FarKind } from "./scene/updater";
import type { WorldSensor } from "./world";

export type CameraMode = "follow" | "orbit" | "top";

export interface Overlays {
  lidar: boolean;
  rays: boolean;
  paths: boolean;
  driver: boolean;
}

export interface HoverInfo {
  id: number;
  kind: string;
  model: string;
  speed: number;
  x: number; // page position of the pointer (px)
  y: number;
}

export interface RenderingProps {
  egoSensor: EgoSensor | null;
  worldSensor: WorldSensor;
  laneSensor: LaneSensor | null;
  /** This frame draws from nothing (a key frame: after connecting or a jump in time). */
  keyFrame?: boolean;
  sensors?: Sensors;
  models?: string[];
  kinds?: string[];
  cameraMode?: CameraMode;
  overlays?: Overlays;
  /** Multisampling (default true; software WebGL renders much faster without). */
  antialias?: boolean;
  /** Canvas pixels per CSS pixel (default: the screen's, at most 2). */
  pixelRatio?: number;
  /** How objects of one model are drawn (default: batched on software WebGL, else instanced). */
  draw?: DrawKind;
  /** How far objects are drawn where batched (default points; ./scene/points.ts). */
  far?: FarKind;
  /** Render as the seed document does (the benchmark's reference). */
  seedMode?: boolean;
  onHover?: (info: HoverInfo | null) => void;
}

// Hex codes, made colours after mount (which sets three.js' colour management).
const FRONT = 0xff3df5;
const REAR = 0x22e0ff;
const HOVER = 0xffd400;
const FRAME_TIMES = 600; // animation-frame intervals kept for the test hook (ms)

interface Stage {
  renderer: THREE.WebGLRenderer;
  scene: THREE.Scene;
  camera: THREE.PerspectiveCamera;
  controls: OrbitControls;
  updater: SceneUpdater;
  overlays: THREE.Group;
  lidar: THREE.Points;
  rays: THREE.LineSegments;
  paths: THREE.Group;
  arrival: number; // when the latest frame came (ms, performance.now)
  interval: number; // between frames, smoothed (ms)
  alpha: number; // how far the last motion is shown, in [0, 1]
  pointer: THREE.Vector2 | null;
  pointerPx: [number, number];
  pointerMoved: boolean;
  hovered: number | null;
  frameTimes: number[];
  frameCount: number; // animation frames since mount
  lastTick: number;
  egoAt: THREE.Vector3 | null; // for the orbit camera: follow the ego's moves
  egoShown: number[] | null; // the ego pose the camera was last placed from (world - origin)
  props: () => RenderingProps; // the latest, for the handlers outside React
  tickMs: number[]; // main-thread time of each animation frame (interpolate + render calls)
  updateMs: number[]; // of each scene update
}

function push(list: number[], value: number): void {
  list.push(value);
  if (list.length > FRAME_TIMES) list.shift();
}

export function Rendering(props: RenderingProps) {
  const host = useRef<HTMLDivElement>(null);
  const stage = useRef<Stage | null>(null);
  const latest = useRef(props);
  latest.current = props;

  // -- mount: scene, renderer, camera, lights, and the animation loop -----------------------
  useEffect(() => {
    const div = host.current!;
    const renderer = new THREE.WebGLRenderer({ antialias: props.antialias ?? true, powerPreference: "high-performance" });
    renderer.setPixelRatio(props.pixelRatio ?? Math.min(window.devicePixelRatio, 2));
    renderer.setSize(div.clientWidth, div.clientHeight);
    // Colours stay display (sRGB) values from the hex codes to the screen, as in three.js
    // before r152: no conversion to linear on the way in, none back in every fragment
    // shader on the way out. That conversion (a pow per channel per pixel) took a third of
    // the frame on SwiftShader at 5,000 objects. The cost: lit materials (the ego, the
    // instanced draws) are lit in sRGB rather than linear values. Set before any colour.
    THREE.ColorManagement.enabled = false;
    renderer.outputColorSpace = THREE.LinearSRGBColorSpace;
    div.appendChild(renderer.domElement);
    const scene = new THREE.Scene();
    scene.background = new THREE.Color(COLORS.background);
    const camera = new THREE.PerspectiveCamera(55, div.clientWidth / Math.max(div.clientHeight, 1), 0.5, 3000);
    camera.position.set(-30, 25, 30);
    camera.lookAt(0, 0, 0);
    scene.add(new THREE.HemisphereLight(0xdfefff, 0x54614a, 1.6));
    const sun = new THREE.DirectionalLight(0xffffff, 1.8);
    sun.position.set(-200, 400, 150);
    scene.add(sun);
    const ground = new THREE.Mesh(
      new THREE.PlaneGeometry(20000, 20000).rotateX(-Math.PI / 2).translate(0, -0.05, 0),
      new THREE.MeshBasicMaterial({ color: COLORS.ground }), // unlit: flat, and cheap per pixel
    );
    ground.name = "ground";
    // Drawn first and behind everything: across a 20 km plane the depth of two large
    // triangles is too coarse to keep it under roads 5 cm above (they flickered away).
    ground.renderOrder = -1;
    (ground.material as THREE.Material).depthWrite = false;
    scene.add(ground);
    const updater = new SceneUpdater(scene, { seed: props.seedMode, draw: props.draw ?? drawFor(renderer), far: props.far });
    const controls = new OrbitControls(camera, renderer.domElement);
    controls.enableDamping = false;
    controls.maxPolarAngle = Math.PI / 2 - 0.02;
    const overlays = new THREE.Group();
    overlays.name = "overlays";
    const lidar = new THREE.Points(
      new THREE.BufferGeometry(),
      new THREE.PointsMaterial({ size: 2, sizeAttenuation: false, vertexColors: false, color: 0x00ffa0 }),
    );
    lidar.frustumCulled = false;
    const rays = new THREE.LineSegments(new THREE.BufferGeometry(), new THREE.LineBasicMaterial({ color: 0xffe060 }));
    rays.frustumCulled = false;
    const paths = new THREE.Group();
    overlays.add(lidar, rays, paths);
    scene.add(overlays);
    const s: Stage = {
      renderer, scene, camera, controls, updater, overlays, lidar, rays, paths,
      arrival: performance.now(), interval: 50, alpha: 1, pointer: null, pointerPx: [0, 0], pointerMoved: false,
      hovered: null, frameTimes: [], frameCount: 0, lastTick: 0, egoAt: null, egoShown: null, props: () => latest.current,
      tickMs: [], updateMs: [],
    };
    stage.current = s;

    const resize = () => {
      renderer.setSize(div.clientWidth, div.clientHeight);
      camera.aspect = div.clientWidth / Math.max(div.clientHeight, 1);
      camera.updateProjectionMatrix();
    };
    const observer = new ResizeObserver(resize);
    observer.observe(div);
    const move = (e: PointerEvent) => {
      const r = renderer.domElement.getBoundingClientRect();
      s.pointer = new THREE.Vector2(((e.clientX - r.left) / r.width) * 2 - 1, -((e.clientY - r.top) / r.height) * 2 + 1);
      s.pointerPx = [e.clientX, e.clientY];
      s.pointerMoved = true;
    };
    const leave = () => {
      s.pointer = null;
      setHover(s, null);
    };
    renderer.domElement.addEventListener("pointermove", move);
    renderer.domElement.addEventListener("pointerleave", leave);

    let raf = 0;
    const view = new DetailPicker();
    const tick = (now: number) => {
      raf = requestAnimationFrame(tick);
      if (s.lastTick) {
        s.frameTimes.push(now - s.lastTick);
        if (s.frameTimes.length > FRAME_TIMES) s.frameTimes.shift();
      }
      s.lastTick = now;
      s.frameCount++;
      const t0 = performance.now();
      s.alpha = Math.min(1, (now - s.arrival) / s.interval);
      placeCamera(s, latest.current.cameraMode ?? "follow");
      camera.updateMatrixWorld();
      updater.interpolate(s.alpha, view.setCamera(camera, renderer.domElement.height));
      if (s.pointer && s.pointerMoved) pick(s);
      renderer.render(scene, camera);
      push(s.tickMs, performance.now() - t0);
    };
    raf = requestAnimationFrame(tick);
    hook(s);
    return () => {
      cancelAnimationFrame(raf);
      observer.disconnect();
      renderer.domElement.removeEventListener("pointermove", move);
      renderer.domElement.removeEventListener("pointerleave", leave);
      controls.dispose();
      updater.dispose();
      renderer.dispose();
      div.removeChild(renderer.domElement);
      stage.current = null;
    };
  }, [props.seedMode, props.antialias, props.pixelRatio, props.draw, props.far]);

  // -- new props: update the scene ------------------------------------------------------------
  useEffect(() => {
    const s = stage.current;
    if (!s) return;
    const now = performance.now();
    const gap = now - s.arrival;
    if (!props.keyFrame && gap > 5 && gap < 2000) s.interval = 0.8 * s.interval + 0.2 * gap;
    s.arrival = now;
    s.updater.models = props.models ?? s.updater.models;
    highlights(s, props);
    const t0 = performance.now();
    s.updater.update(props.egoSensor, props.worldSensor, props.laneSensor, props.keyFrame ?? false, s.alpha);
    push(s.updateMs, performance.now() - t0);
    s.alpha = 0;
    if (props.keyFrame) s.updater.interpolate(1);
    (window as unknown as { __roadsim: Record<string, unknown> }).__roadsim.shown = props.worldSensor.frame;
  }, [props.egoSensor, props.worldSensor, props.laneSensor, props.keyFrame]);

  // -- overlays: sensor data and scripted paths -------------------------------------------------
  useEffect(() => {
    const s = stage.current;
    if (!s) return;
    const o = props.overlays;
    s.lidar.visible = !!o?.lidar;
    s.rays.visible = !!o?.rays;
    s.paths.visible = !!o?.paths;
    const lidar = props.sensors?.lidar?.[0];
    if (o?.lidar && lidar) setPositions(s.lidar, lidar.points, props.worldSensor.frame);
    const rays = props.sensors?.raytracer?.[0];
    if (o?.rays && rays) setPositions(s.rays, rays.segments, props.worldSensor.frame);
  }, [props.sensors, props.overlays]);

  useEffect(() => {
    const s = stage.current;
    if (!s) return;
    for (const child of [...s.paths.children]) {
      s.paths.remove(child);
      (child as THREE.Line).geometry.dispose();
    }
    const material = new THREE.LineBasicMaterial({ color: COLORS.scripted });
    const radiusMaterial = new THREE.LineDashedMaterial({ color: 0x2e8b57, dashSize: 3, gapSize: 2 });
    for (const script of props.worldSensor.scripts) {
      s.paths.add(new THREE.Line(new THREE.BufferGeometry().setAttribute("position", threeAttribute(script.path, 0.15)), material));
      if (script.radius > 0 && script.path.length >= 3) {
        const ring: number[] = [];
        for (let k = 0; k <= 96; k++) {
          const a = (2 * Math.PI * k) / 96;
          ring.push(script.path[0] + script.radius * Math.cos(a), script.path[1] + script.radius * Math.sin(a), script.path[2] + 0.15);
        }
        const line = new THREE.Line(new THREE.BufferGeometry().setAttribute("position", threeAttribute(new Float32Array(ring))), radiusMaterial);
        line.computeLineDistances();
        s.paths.add(line);
      }
    }
  }, [props.worldSensor.scripts]);

  return <div ref={host} className="rendering" data-testid="rendering" />;
}

/** Batched on a software renderer (per-instance costs dominate there), else instanced. */
function drawFor(renderer: THREE.WebGLRenderer): DrawKind {
  const gl = renderer.getContext();
  const info = gl.getExtension("WEBGL_debug_renderer_info");
  const name = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
  return /swiftshader|llvmpipe|softpipe|software/i.test(name) ? "batched" : "instanced";
}

/** Shows `points` (world frame minus origin) in an overlay; `frame` is the feed frame they came in. */
function setPositions(overlay: THREE.Points | THREE.LineSegments, points: Float32Array, frame: number): void {
  // A new geometry rather than a new attribute on the old one: three.js deletes buffers on
  // the geometry's dispose only, so a replaced attribute's would wait for the garbage collector.
  overlay.geometry.dispose();
  overlay.geometry = new THREE.BufferGeometry().setAttribute("position", threeAttribute(points));
  overlay.userData.frame = frame;
}

/** An overlay as the test hook reports it: shown or not, its vertices, their feed frame. */
function overlayState(overlay: THREE.Points | THREE.LineSegments, perItem: number) {
  const position = overlay.geometry.getAttribute("position") as THREE.BufferAttribute | undefined;
  const n = position ? position.count : 0;
  return {
    visible: overlay.visible,
    count: Math.floor(n / perItem), // points, or line segments
    frame: (overlay.userData.frame as number | undefined) ?? -1,
    first: position ? Array.from((position.array as Float32Array).subarray(0, 3 * 4 * perItem)) : [], // 4 items
  };
}

/** World points (x, y, z minus origin) as a three.js position attribute. */
function threeAttribute(points: Float32Array, lift = 0): THREE.BufferAttribute {
  const out = new Float32Array(points.length);
  for (let k = 0; k + 2 < points.length; k += 3) toThree(out, k, points[k], points[k + 1], points[k + 2] + lift);
  return new THREE.BufferAttribute(out, 3);
}

function highlights(s: Stage, props: RenderingProps): void {
  const h = s.updater.highlight;
  h.clear();
  if (props.overlays?.driver && props.egoSensor) {
    const view = props.sensors?.driver?.find((d) => d.id === props.egoSensor!.id);
    if (view) {
      for (const k of ["front", "front_left", "front_right"] as const) if (view[k] >= 0) h.set(view[k], new THREE.Color(FRONT));
      for (const k of ["rear", "rear_left", "rear_right"] as const) if (view[k] >= 0) h.set(view[k], new THREE.Color(REAR));
    }
  }
  if (s.hovered !== null) h.set(s.hovered, new THREE.Color(HOVER));
}

function setHover(s: Stage, id: number | null): void {
  s.hovered = id;
  const p = s.props();
  if (!p.onHover) return;
  if (id === null) return p.onHover(null);
  const o = p.worldSensor.objects.get(id);
  const ego = p.egoSensor && p.egoSensor.id === id ? p.egoSensor : null;
  const kinds = p.kinds ?? [];
  const models = p.models ?? [];
  p.onHover({
    id,
    kind: ego ? "ego" : o ? kinds[o.kind] ?? String(o.kind) : "?",
    model: ego ? ego.model : o ? models[o.model] ?? String(o.model) : "?",
    speed: ego ? ego.speed : o ? o.speed : 0,
    x: s.pointerPx[0],
    y: s.pointerPx[1],
  });
}

const raycaster = new THREE.Raycaster();
// Far objects are points (./scene/points.ts): a hit within this many metres of one picks it.
raycaster.params.Points.threshold = 2.5;

function pick(s: Stage): void {
  s.pointerMoved = false;
  raycaster.setFromCamera(s.pointer!, s.camera);
  const targets = s.updater.pickTargets();
  const hit = raycaster.intersectObjects(targets, false)[0];
  const id = hit ? (hit.object === s.updater.ego ? (s.updater.ego.userData.id as number) : s.updater.idOf(hit)) : null;
  setHover(s, id);
}

const behind = new THREE.Vector3();
const target = new THREE.Vector3();

function placeCamera(s: Stage, mode: CameraMode): void {
  const p = s.updater.egoPose(s.alpha);
  s.egoShown = p;
  s.controls.enabled = mode === "orbit";
  if (!p) {
    if (mode === "orbit") s.controls.update();
    return;
  }
  target.set(p[0], p[2] + 1, -p[1]);
  const c = Math.cos(p[3]);
  const sn = Math.sin(p[3]);
  if (mode === "follow") {
    behind.set(p[0] - 14 * c, p[2] + 6, -(p[1] - 14 * sn));
    s.camera.position.copy(behind);
    s.camera.up.set(0, 1, 0);
    s.camera.lookAt(p[0] + 12 * c, p[2] + 1, -(p[1] + 12 * sn));
  } else if (mode === "top") {
    s.camera.position.set(p[0], p[2] + 140, -p[1] + 0.01);
    s.camera.up.set(0, 0, -1); // north up
    s.camera.lookAt(target);
  } else {
    if (s.egoAt) s.camera.position.add(target.clone().sub(s.egoAt));
    s.controls.target.copy(target);
    s.camera.up.set(0, 1, 0);
    s.controls.update();
  }
  s.egoAt = target.clone();
}

/** `window.__roadsim`: what the browser tests and the benchmark read. */
function hook(s: Stage): void {
  const w = window as unknown as { __roadsim?: Record<string, unknown> };
  w.__roadsim = Object.assign(w.__roadsim ?? {}, {
    objectIds: () => s.updater.objectIds(),
    objectCount: () => s.updater.objectCount,
    drawnCount: () => s.updater.drawnCount,
    drawnFarCount: () => s.updater.drawnFarCount,
    drawnBoxCount: () => s.updater.drawnBoxCount,
    egoCreations: () => s.updater.egoCreations,
    laneBuilds: () => s.updater.laneBuilds,
    laneVersion: () => s.updater.laneVersion,
    poolStats: () => s.updater.poolStats(),
    drawCalls: () => s.renderer.info.render.calls,
    triangles: () => s.renderer.info.render.triangles,
    frameTimes: () => [...s.frameTimes],
    frameCount: () => s.frameCount,
    tickMs: () => [...s.tickMs],
    updateMs: () => [...s.updateMs],
    clearFrameTimes: () => {
      s.frameTimes.length = 0;
      s.tickMs.length = 0;
      s.updateMs.length = 0;
    },
    overlays: () => ({ lidar: overlayState(s.lidar, 1), rays: overlayState(s.rays, 2) }),
    /** The view camera (three.js frame) and the ego pose it was placed from, one frame's. */
    view: () => ({
      position: s.camera.position.toArray(),
      direction: s.camera.getWorldDirection(new THREE.Vector3()).toArray(),
      up: s.camera.up.toArray(),
      ego: s.egoShown,
      alpha: s.alpha,
    }),
    /** "srgb-linear": fragment shaders write colours as they are (display values). */
    outputColorSpace: s.renderer.outputColorSpace,
    colorManagement: THREE.ColorManagement.enabled,
    seedMode: s.updater.seed,
    draw: s.updater.draw,
    far: s.updater.far,
  });
}

