// The scene's update logic, apart from any renderer so that it runs (and is tested)
// without WebGL. `SceneUpdater.update` follows the seed document's four steps:
//   1. street lanes removed - here only when the lane sensor's version changed;
//   2. the ego created, once;
//   3. world objects created, updated and removed by id - here one InstancedMesh per model;
//   4. street lanes added - again only on a new version.
// `seed: true` does what the document does (every lane rebuilt on each update, one mesh per
// object), so that the benchmark can measure both on the same page.
import * as THREE from "three";
import { mergeGeometries } from "three/examples/jsm/utils/BufferGeometryUtils.js";
import type { EgoSensor, LaneSensor } from "../protocol";
import type { WorldObject, WorldSensor } from "../world";
import { lerpAngle, writeBoxMatrix } from "./frames";
import { NEAR, type Detail, type DetailPicker } from "./detail";
import { BatchDraw, type DrawKind, type PoolDraw } from "./draws";
import { InstancedPool } from "./instances";
import { PointDraw, pointMaterial } from "./points";
import { laneStrips, markStrips, stripGeometry } from "./lanes";

export const COLORS = {
  background: 0xa9c6de,
  ground: 0x7d8f6a,
  ego: 0xff8c1a,
  vehicle: 0x3d7bd9,
  static: 0x8a8a8a,
  scripted: 0x3cb371,
  collided: 0xe53935,
};

/** A unit-sized shape per model name, its base on the ground, its length along x. */
function modelGeometry(name: string): THREE.BufferGeometry {
  if (name === "car" || name === "truck" || name === "bus") {
    const body = new THREE.BoxGeometry(1, 0.6, 1).translate(0, 0.3, 0);
    const cabinLength = name === "car" ? 0.5 : 0.9;
    const cabin = new THREE.BoxGeometry(cabinLength, 0.4, 0.92).translate(
      name === "car" ? -0.08 : 0.04,
      0.8,
      0,
    );
    return mergeGeometries([body, cabin])!;
  }
  if (name === "cone") return new THREE.ConeGeometry(0.5, 1, 12).translate(0, 0.5, 0);
  if (name === "pedestrian" || name === "cyclist")
    return new THREE.CylinderGeometry(0.4, 0.4, 1, 10).translate(0, 0.5, 0);
  return new THREE.BoxGeometry(1, 1, 1).translate(0, 0.5, 0);
}

/**
 * A unit box, base on the ground, without its bottom face (the cameras stay above the
 * ground): what objects at middle distance are drawn as where batched (./detail.ts).
 */
function boxGeometry(): THREE.BufferGeometry {
  const box = new THREE.BoxGeometry(1, 1, 1).translate(0, 0.5, 0);
  // BoxGeometry's faces come in the order +x, -x, +y, -y, +z, -z, 6 indices each.
  const index = Array.from(box.getIndex()!.array);
  index.splice(18, 6);
  return box.setIndex(index);
}

/** A model's roof: one unit quad facing up at its top, what far objects are drawn as. */
function roofGeometry(model: THREE.BufferGeometry): THREE.BufferGeometry {
  model.computeBoundingBox();
  return new THREE.PlaneGeometry(1, 1).rotateX(-Math.PI / 2).translate(0, model.boundingBox!.max.y, 0);
}

export interface UpdaterOptions {
  /** Do as the seed document does (the benchmark's reference). */
  seed?: boolean;
  /** How a model's objects are drawn in one call (default: instanced; ./draws.ts). */
  draw?: DrawKind;
  /** Batched: how far objects are drawn (default: points; ./detail.ts). */
  far?: FarKind;
}

/** Far objects as their roof (a quad: ./draws.ts) or as one point each (./points.ts). */
export type FarKind = "roofs" | "points";

export class SceneUpdater {
  readonly scene: THREE.Scene;
  readonly lanesGroup = new THREE.Group();
  readonly worldGroup = new THREE.Group();
  readonly seed: boolean;
  readonly draw: DrawKind;
  readonly far: FarKind;
  ego: THREE.Mesh | null = null;
  egoCreations = 0;
  laneBuilds = 0;
  laneVersion = -1;
  models: string[] = [];
  /** Colours by id that override an object's own (hover, driver-sensor links). */
  highlight = new Map<number, THREE.Color>();

  private readonly geometries = new Map<number, THREE.BufferGeometry>();
  private readonly roofs = new Map<number, THREE.BufferGeometry>();
  private readonly box = boxGeometry();
  private readonly objectMaterial: THREE.Material;
  private readonly farMaterial = pointMaterial();
  private readonly seedMaterials = new Map<string, THREE.MeshLambertMaterial>();
  private readonly laneMaterial: THREE.MeshBasicMaterial;
  private readonly markMaterial: THREE.MeshBasicMaterial;
  private readonly pools = new Map<number, InstancedPool>();
  private readonly poolOf = new Map<number, InstancedPool>(); // id -> its pool
  private readonly meshes = new Map<number, THREE.Mesh>(); // seed mode: id -> its mesh
  private readonly seedPoses = new Map<number, { prev: number[]; next: number[] }>();
  private egoPrev: number[] = [0, 0, 0, 0];
  private egoNext: number[] = [0, 0, 0, 0];
  private readonly color = new THREE.Color();

  constructor(scene: THREE.Scene, options: UpdaterOptions = {}) {
    this.scene = scene;
    this.seed = options.seed ?? false;
    this.draw = options.draw ?? "instanced";
    this.far = options.far ?? "points";
    this.lanesGroup.name = "lanes";
    this.worldGroup.name = "world";
    scene.add(this.lanesGroup, this.worldGroup);
    // Shared materials, made once (the document's "constants for objects").
    // A batch carries its light in its vertex colours (./draws.ts): unlit.
    this.objectMaterial =
      this.draw === "batched"
        ? new THREE.MeshBasicMaterial({ vertexColors: true })
        : new THREE.MeshLambertMaterial({ color: 0xffffff });
    // Roads are unlit (their colours are what a lit road looks like): software WebGL pays
    // per pixel, and the road covers most of them.
    this.laneMaterial = new THREE.MeshBasicMaterial({ vertexColors: true, side: THREE.DoubleSide });
    this.markMaterial = new THREE.MeshBasicMaterial({
      vertexColors: true,
      side: THREE.DoubleSide,
      polygonOffset: true,
      polygonOffsetFactor: -2,
      polygonOffsetUnits: -2,
    });
  }

  private geometry(model: number): THREE.BufferGeometry {
    let g = this.geometries.get(model);
    if (!g) {
      g = modelGeometry(this.models[model] ?? "box");
      this.geometries.set(model, g);
    }
    return g;
  }

  private roof(model: number): THREE.BufferGeometry {
    let g = this.roofs.get(model);
    if (!g) {
      g = roofGeometry(this.geometry(model));
      this.roofs.set(model, g);
    }
    return g;
  }

  private farDraw(model: number): (capacity: number) => PoolDraw {
    if (this.far === "points") return (capacity) => new PointDraw(this.geometry(model), this.farMaterial, capacity);
    return (capacity) => new BatchDraw(this.roof(model), this.objectMaterial, capacity);
  }

  /** The draw of objects at middle distance: a box, for models of more triangles than a box's 12. */
  private midDraw(model: number): ((capacity: number) => PoolDraw) | null {
    const g = this.geometry(model);
    if ((g.getIndex()?.count ?? g.getAttribute("position").count) / 3 <= 12) return null;
    return (capacity) => new BatchDraw(this.box, this.objectMaterial, capacity);
  }

  /** Applies one frame. `from` in [0, 1]: how far the previous motion had been shown. */
  update(ego: EgoSensor | null, world: WorldSensor, lanes: LaneSensor | null, key = false, from = 1): void {
    const newLanes = lanes !== null && (this.seed || lanes.version !== this.laneVersion);
    if (newLanes) this.removeLanes(); // 1.
    this.updateEgo(ego, key, from); // 2.
    if (this.seed) this.updateSeedObjects(world, key, from);
    else this.updateObjects(world, key, from); // 3.
    if (newLanes) this.addLanes(lanes); // 4.
  }

  // -- 1. and 4. the lanes ------------------------------------------------------------------

  private removeLanes(): void {
    for (const child of [...this.lanesGroup.children]) {
      this.lanesGroup.remove(child);
      (child as THREE.Mesh).geometry.dispose();
    }
  }

  private addLanes(lanes: LaneSensor): void {
    const surfaces = laneStrips(lanes);
    const marks = markStrips(lanes);
    if (this.seed) {
      // One mesh per lane and per mark piece, as the document's updateLanes.
      for (let k = 0; k + 1 < surfaces.ranges.length; k++)
        this.lanesGroup.add(new THREE.Mesh(stripGeometry(surfaces, k, k + 1), this.laneMaterial));
      for (let k = 0; k + 1 < marks.ranges.length; k++)
        this.lanesGroup.add(new THREE.Mesh(stripGeometry(marks, k, k + 1), this.markMaterial));
    } else {
      const lanesMesh = new THREE.Mesh(stripGeometry(surfaces), this.laneMaterial);
      lanesMesh.name = "lane-surfaces";
      lanesMesh.receiveShadow = false;
      const marksMesh = new THREE.Mesh(stripGeometry(marks), this.markMaterial);
      marksMesh.name = "road-marks";
      marksMesh.renderOrder = 1;
      this.lanesGroup.add(lanesMesh, marksMesh);
    }
    this.laneVersion = lanes.version;
    this.laneBuilds++;
  }

  // -- 2. the ego -------------------------------------------------------------------------------

  private updateEgo(ego: EgoSensor | null, key: boolean, from: number): void {
    if (!ego) {
      if (this.ego) this.ego.visible = false;
      return;
    }
    if (!this.ego) {
      const material = new THREE.MeshLambertMaterial({ color: COLORS.ego });
      this.ego = new THREE.Mesh(modelGeometry(ego.model), material);
      this.ego.name = "ego";
      this.ego.userData.id = ego.id;
      this.ego.matrixAutoUpdate = false;
      this.scene.add(this.ego);
      this.egoCreations++;
      key = true;
    }
    this.ego.visible = true;
    this.ego.userData.size = ego.size;
    if (key) this.egoPrev = [...ego.pose];
    else this.egoPrev = lerpPose(this.egoPrev, this.egoNext, from);
    this.egoNext = [...ego.pose];
    (this.ego.material as THREE.MeshLambertMaterial).color.setHex(ego.collided ? COLORS.collided : COLORS.ego);
    this.placeEgo(key ? 1 : 0);
  }

  private placeEgo(t: number): void {
    if (!this.ego) return;
    const p = lerpPose(this.egoPrev, this.egoNext, t);
    const [l, w, h] = this.ego.userData.size as number[];
    writeBoxMatrix(this.ego.matrix.elements as unknown as Float32Array, 0, p[0], p[1], p[2], p[3], l, w, h);
    this.ego.matrixWorldNeedsUpdate = true;
  }

  /** The ego's pose (world frame minus origin) as shown at `t`. */
  egoPose(t: number): number[] | null {
    return this.ego && this.ego.visible ? lerpPose(this.egoPrev, this.egoNext, t) : null;
  }

  // -- 3. world objects -----------------------------------------------------------------------

  objectColor(o: WorldObject): THREE.Color {
    const h = this.highlight.get(o.id);
    if (h) return h;
    const hex = o.collided ? COLORS.collided : o.kind === 0 ? COLORS.vehicle : o.kind === 2 ? COLORS.scripted : COLORS.static;
    return this.color.setHex(hex);
  }

  private pool(model: number): InstancedPool {
    let pool = this.pools.get(model);
    if (!pool) {
      const batched = this.draw === "batched";
      const far = batched ? this.farDraw(model) : null;
      const mid = batched ? this.midDraw(model) : null;
      pool = new InstancedPool(this.geometry(model), this.objectMaterial, this.worldGroup, model, this.draw, undefined, far, mid);
      this.pools.set(model, pool);
    }
    return pool;
  }

  private updateObjects(world: WorldSensor, key: boolean, from: number): void {
    for (const o of world.objects.values()) {
      let pool = this.poolOf.get(o.id);
      if (pool && pool.model !== o.model) {
        pool.remove(o.id);
        pool = undefined;
      }
      if (!pool) {
        pool = this.pool(o.model);
        pool.add(o.id, o.pose, o.size); // placeWorldObject
        this.poolOf.set(o.id, pool);
      } else if (key) pool.place(o.id, o.pose);
      else pool.move(o.id, o.pose, from); // updateWorldObject
      pool.setColor(o.id, this.objectColor(o));
    }
    if (this.poolOf.size > world.objects.size) {
      for (const [id, pool] of this.poolOf) {
        if (!world.objects.has(id)) {
          pool.remove(id);
          this.poolOf.delete(id);
        }
      }
    }
  }

  private updateSeedObjects(world: WorldSensor, key: boolean, from: number): void {
    for (const o of world.objects.values()) {
      let mesh = this.meshes.get(o.id);
      if (!mesh) {
        const hex = this.objectColor(o).getHex();
        let material = this.seedMaterials.get(String(hex));
        if (!material) {
          material = new THREE.MeshLambertMaterial({ color: hex });
          this.seedMaterials.set(String(hex), material);
        }
        mesh = new THREE.Mesh(this.geometry(o.model), material);
        mesh.matrixAutoUpdate = false;
        mesh.userData.id = o.id;
        mesh.userData.size = o.size;
        this.meshes.set(o.id, mesh);
        this.worldGroup.add(mesh);
        this.seedPoses.set(o.id, { prev: [...o.pose], next: [...o.pose] });
      } else {
        const s = this.seedPoses.get(o.id)!;
        s.prev = key ? [...o.pose] : lerpPose(s.prev, s.next, from);
        s.next = [...o.pose];
      }
    }
    for (const [id, mesh] of this.meshes) {
      if (!world.objects.has(id)) {
        this.worldGroup.remove(mesh);
        this.meshes.delete(id);
        this.seedPoses.delete(id);
      }
    }
  }

  /**
   * Moves everything to `t` in [0, 1] between the previous frame and the latest; with a
   * camera's `view`, batched pools draw only the objects in it, the far ones as their
   * roof (./detail.ts).
   */
  interpolate(t: number, view?: DetailPicker): void {
    this.placeEgo(t);
    if (view) this.farMaterial.uniforms.pixelsPerMetre.value = view.pixelsPerMetre;
    const detail = view ? (x: number, y: number, z: number, r: number) => view.detail(x, y, z, r) : undefined;
    for (const pool of this.pools.values()) pool.interpolate(t, detail);
    for (const [id, mesh] of this.meshes) {
      const s = this.seedPoses.get(id)!;
      const p = lerpPose(s.prev, s.next, t);
      const [l, w, h] = mesh.userData.size as number[];
      writeBoxMatrix(mesh.matrix.elements as unknown as Float32Array, 0, p[0], p[1], p[2], p[3], l, w, h);
      mesh.matrixWorldNeedsUpdate = true;
    }
  }

  /** Where an object is shown at `t` (world frame minus origin), null if not in the scene. */
  objectPose(id: number, t: number): number[] | null {
    const pool = this.poolOf.get(id);
    if (pool) return pool.poseAt(id, t);
    const s = this.seedPoses.get(id);
    return s ? lerpPose(s.prev, s.next, t) : null;
  }

  /** The id of the object an intersection hit (instance or mesh), or null. */
  idOf(hit: THREE.Intersection): number | null {
    const pool = hit.object.userData.pool as InstancedPool | undefined;
    const level = (hit.object.userData.level as Detail | undefined) ?? NEAR;
    const slot = pool?.drawOf(level)?.slotOf(hit);
    if (pool && slot !== undefined) return pool.idAtSlot(slot, level);
    const id = hit.object.userData.id;
    return typeof id === "number" ? id : null;
  }

  /** The ids of the world objects in the scene, sorted. */
  objectIds(): number[] {
    const ids = this.seed ? [...this.meshes.keys()] : [...this.poolOf.keys()];
    return ids.sort((a, b) => a - b);
  }

  get objectCount(): number {
    return this.seed ? this.meshes.size : this.poolOf.size;
  }

  /** The scene objects to raycast for hovering, their bounds current. */
  pickTargets(): THREE.Object3D[] {
    for (const pool of this.pools.values()) {
      pool.draw.prepareRaycast();
      pool.farDraw?.prepareRaycast();
      pool.midDraw?.prepareRaycast();
    }
    const out: THREE.Object3D[] = [...this.worldGroup.children];
    if (this.ego) out.push(this.ego);
    return out;
  }

  /** Where the pool draws object `id` (three.js frame), for tests. */
  drawnAt(id: number): THREE.Vector3 | null {
    const pool = this.poolOf.get(id);
    const i = pool?.index.get(id);
    return pool && i !== undefined ? pool.draw.centreOf(i) : null;
  }

  /** Pools by model: count, capacity and the instances drawn last frame (tests, benchmark). */
  poolStats(): { model: number; count: number; capacity: number; drawn: number }[] {
    return [...this.pools.values()].map((p) => ({ model: p.model, count: p.count, capacity: p.capacity, drawn: p.drawn }));
  }

  /** World objects drawn as a box in the last frame (at middle distance, where batched and culled). */
  get drawnBoxCount(): number {
    return [...this.pools.values()].reduce((n, p) => n + p.drawnBoxes, 0);
  }

  /** World objects drawn far (points or roofs) in the last frame (where batched and culled). */
  get drawnFarCount(): number {
    return [...this.pools.values()].reduce((n, p) => n + p.drawnFar, 0);
  }

  /** World objects drawn in the last frame (those in view, where culled). */
  get drawnCount(): number {
    return this.seed ? this.meshes.size : [...this.pools.values()].reduce((n, p) => n + p.drawn, 0);
  }

  dispose(): void {
    this.removeLanes();
    for (const pool of this.pools.values()) pool.dispose();
    for (const g of [...this.geometries.values(), ...this.roofs.values(), this.box]) g.dispose();
    this.objectMaterial.dispose();
    this.farMaterial.dispose();
    this.laneMaterial.dispose();
    this.markMaterial.dispose();
  }
}

export function lerpPose(a: number[], b: number[], t: number): number[] {
  return [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t, lerpAngle(a[3], b[3], t)];
}
