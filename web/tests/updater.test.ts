// The scene's update logic on a three.js scene, without WebGL.
import * as THREE from "three";
import { describe, expect, it } from "vitest";
import type { EgoSensor, LaneSensor, WorldDelta } from "../src/protocol";
import { DetailPicker, FAR, FAR_PIXELS, MID, MODEL_PIXELS, NEAR, OUT_OF_VIEW } from "../src/scene/detail";
import type { DrawKind } from "../src/scene/draws";
import { MIN_CAPACITY } from "../src/scene/instances";
import { SceneUpdater, type FarKind } from "../src/scene/updater";
import { WorldStore } from "../src/world";

const MODELS = ["car", "truck", "bus", "box", "cone"];

function ego(x = 0): EgoSensor {
  return { id: 0, model: "car", pose: [x, 0, 0, 0], size: [4.6, 1.9, 1.5], speed: 5, accel: 0, steer: 0, collided: false };
}

interface Obj {
  id: number;
  model?: number;
  x?: number;
}

/** A delta that adds `add`, removes `remove` and moves `move` (ids to x positions). */
function delta(add: Obj[], remove: number[] = [], move: Obj[] = []): WorldDelta {
  const posed = [...add, ...move];
  const xyzhv = new Float32Array(5 * posed.length);
  posed.forEach((o, i) => (xyzhv[5 * i] = o.x ?? o.id));
  return {
    add: {
      id: Int32Array.from(add.map((o) => o.id)),
      kind: Uint8Array.from(add.map(() => 0)),
      model: Uint8Array.from(add.map((o) => o.model ?? 0)),
      size: new Float32Array(add.flatMap(() => [4, 2, 1.5])),
    },
    remove: Int32Array.from(remove),
    pose: { id: Int32Array.from(posed.map((o) => o.id)), xyzhv },
    collided: new Int32Array(0),
    count: 0,
  };
}

function lanes(version: number): LaneSensor {
  // One section: 3 rows along s, 3 borders (lane 1, center, lane -1).
  const points: number[] = [];
  for (let r = 0; r < 3; r++) for (const t of [3.5, 0, -3.5]) points.push(10 * r, t, 0);
  return {
    version,
    sections: Int32Array.of(0),
    rows: Int32Array.of(3),
    cols: Int32Array.of(3),
    points: Float32Array.from(points),
    laneId: Int8Array.of(1, 0, -1),
    laneType: Uint8Array.of(1, 0, 1),
    markStart: Int32Array.of(0, 3),
    markPoints: Float32Array.from([0, 0, 0, 10, 0, 0, 20, 0, 0]),
    markWidth: Float32Array.of(0.15),
    markType: Uint8Array.of(0),
    markColor: Uint8Array.of(0),
    laneTypes: ["none", "driving"],
    markTypes: ["solid"],
    colors: ["white"],
  };
}

function setup(seed = false, draw: DrawKind = "instanced", far: FarKind = "points") {
  const scene = new THREE.Scene();
  const updater = new SceneUpdater(scene, { seed, draw, far });
  updater.models = MODELS;
  const store = new WorldStore();
  let frame = 0;
  const apply = (d: WorldDelta, l: LaneSensor | null = null, key = false, e: EgoSensor | null = ego()) => {
    store.apply(d, key);
    updater.update(e, store.sensor(frame, frame * 0.05), l, key);
    frame++;
  };
  return { scene, updater, store, apply };
}


describe("SceneUpdater", () => {
  it("creates, updates and removes world objects by id", () => {
    const { updater, apply } = setup();
    apply(delta([{ id: 1 }, { id: 2 }, { id: 3, model: 1 }]), null, true);
    expect(updater.objectIds()).toEqual([1, 2, 3]);
    apply(delta([{ id: 4 }], [2], [{ id: 1, x: 42 }]));
    expect(updater.objectIds()).toEqual([1, 3, 4]);
    expect(updater.objectPose(1, 1)![0]).toBeCloseTo(42);
    expect(updater.objectPose(1, 0)![0]).toBeCloseTo(1); // interpolated from where it was
    expect(updater.objectPose(2, 1)).toBeNull();
  });

  it("creates the ego once", () => {
    const { updater, apply, scene } = setup();
    for (let i = 0; i < 5; i++) apply(delta([]), null, i === 0, ego(i));
    expect(updater.egoCreations).toBe(1);
    expect(scene.children.filter((c) => c.name === "ego")).toHaveLength(1);
    expect(updater.egoPose(1)![0]).toBeCloseTo(4);
  });

  it("rebuilds the lanes only when their version changes", () => {
    const { updater, apply } = setup();
    apply(delta([]), lanes(1), true);
    const first = updater.lanesGroup.children[0];
    apply(delta([]), null);
    apply(delta([]), lanes(1)); // the same version sent again: nothing to do
    expect(updater.laneBuilds).toBe(1);
    expect(updater.lanesGroup.children[0]).toBe(first);
    apply(delta([]), lanes(2));
    expect(updater.laneBuilds).toBe(2);
    expect(updater.lanesGroup.children).toHaveLength(2); // surfaces and marks
    expect(updater.lanesGroup.children[0]).not.toBe(first);
  });

  it("the seed's way rebuilds the lanes on every update, one mesh per lane", () => {
    const { updater, apply } = setup(true);
    apply(delta([{ id: 1 }, { id: 2 }]), lanes(1), true);
    apply(delta([], [1]), lanes(1));
    expect(updater.laneBuilds).toBe(2);
    expect(updater.lanesGroup.children).toHaveLength(3); // two lanes, one mark piece
    expect(updater.objectIds()).toEqual([2]);
  });

  it.each(["instanced", "batched"] as DrawKind[])("shares one %s mesh per model, growing and shrinking with the count", (draw) => {
    const { updater, apply, scene } = setup(false, draw);
    // boxes and cones: shapes centred on their pose, so the mean of a batch's vertices is the pose
    const many = Array.from({ length: 1000 }, (_, i) => ({ id: i + 1, model: 3 + (i % 2) }));
    apply(delta(many), null, true);
    // a batch also has its far draw (./detail.ts), and the cones (more triangles than a box)
    // a box draw for middle distance, empty until culled
    const all = () => scene.getObjectByName("world")!.children as THREE.Mesh[];
    expect(all()).toHaveLength(draw === "batched" ? 5 : 2);
    expect(all().filter((m) => m.userData.level).every((m) => m.geometry.drawRange.count === 0)).toBe(true);
    const meshes = () => all().filter((m) => !m.userData.level);
    expect(meshes()).toHaveLength(2);
    expect(meshes().every((m) => (m instanceof THREE.InstancedMesh) === (draw === "instanced"))).toBe(true);
    for (const stats of updater.poolStats()) {
      expect(stats.count).toBe(500);
      expect(stats.capacity).toBe(512);
    }
    // Remove all but 10 of model 0: the pool shrinks, the survivors keep their poses.
    const gone = many.filter((o) => o.model === 3).slice(10).map((o) => o.id);
    apply(delta([], gone));
    const car = updater.poolStats().find((s) => s.model === 3)!;
    expect(car.count).toBe(10);
    expect(car.capacity).toBeLessThanOrEqual(4 * Math.max(10, MIN_CAPACITY));
    expect(updater.objectCount).toBe(510);
    for (const id of updater.objectIds()) {
      expect(updater.objectPose(id, 1)![0]).toBeCloseTo(id);
      // drawn where the feed put it: world x is three.js x, world y is three.js -z
      expect(updater.drawnAt(id)!.x).toBeCloseTo(id, 4);
      expect(updater.drawnAt(id)!.z).toBeCloseTo(0, 4);
    }
    const mesh = meshes().find((m) => m.userData.model === 3)!;
    if (mesh instanceof THREE.InstancedMesh) expect(mesh.count).toBe(10);
    else expect(mesh.geometry.drawRange.count).toBe(10 * (mesh.geometry.index!.count / car.capacity));
  });

  it("moves an object whose model changed to the other model's mesh", () => {
    const { updater, apply, store } = setup();
    apply(delta([{ id: 7, model: 0 }]), null, true);
    store.objects.get(7)!.model = 2;
    apply(delta([]));
    expect(updater.poolStats().find((s) => s.model === 2)!.count).toBe(1);
    expect(updater.poolStats().find((s) => s.model === 0)!.count).toBe(0);
  });

  it("a batched pool given a camera's frustum draws only the objects in view", () => {
    const { updater, apply } = setup(false, "batched");
    apply(delta(Array.from({ length: 100 }, (_, i) => ({ id: i + 1, model: 3, x: 10 * i }))), null, true);
    // A camera at x = 0 looking along +x (three.js), seeing 40 m: the first few boxes.
    const camera = new THREE.PerspectiveCamera(60, 1, 0.5, 40);
    camera.position.set(-1, 1, 0);
    camera.lookAt(10, 1, 0);
    camera.updateMatrixWorld();
    const frustum = new DetailPicker().setCamera(camera, 4000); // every box near (a tall screen)
    updater.interpolate(1, frustum);
    expect(updater.drawnCount).toBe(5); // x = 0 to 40 (the box at 40 reaches into the 41 m)
    const pool = (updater.scene.getObjectByName("world")!.children[0] as THREE.Mesh).userData.pool;
    expect([0, 1, 2, 3, 4].map((slot) => pool.idAtSlot(slot))).toEqual([1, 2, 3, 4, 5]);
    // A colour change and a removal while culled show in the next culled frame.
    updater.highlight.set(3, new THREE.Color(1, 0, 0));
    apply(delta([], [2]));
    updater.interpolate(1, frustum);
    expect([0, 1, 2, 3].map((slot) => pool.idAtSlot(slot))).toEqual([1, 3, 4, 5]);
    const colors = pool.mesh.geometry.getAttribute("color");
    const perObject = colors.count / pool.capacity;
    const red = (slot: number) => colors.getX(slot * perObject) > 0.5 && colors.getY(slot * perObject) < 0.1;
    expect([0, 1, 2, 3].map(red)).toEqual([false, true, false, false]);
    updater.interpolate(1); // no frustum: every object again
    expect(updater.drawnCount).toBe(99);
    expect(updater.drawnAt(100)!.x).toBeCloseTo(990, 3);
  });

  it.each(["points", "roofs"] as FarKind[])("a batched pool draws far objects as %s, near ones as their model, and picks both", (farKind) => {
    const { updater, apply } = setup(false, "batched", farKind);
    // Boxes (4 x 2 x 1.5 m) every 10 m along +x, seen from x = -1 along +x, 360 px high.
    apply(delta(Array.from({ length: 100 }, (_, i) => ({ id: i + 1, model: 3, x: 10 * i }))), null, true);
    const camera = new THREE.PerspectiveCamera(60, 16 / 9, 0.5, 400);
    camera.position.set(-1, 1, 0);
    camera.lookAt(10, 1, 0);
    camera.updateMatrixWorld();
    const view = new DetailPicker().setCamera(camera, 360);
    // Far: the sphere's diameter (4.9 m) under FAR_PIXELS at 360 / (2 tan 30 deg) px per radian.
    const pxPerRad = 360 / (2 * Math.tan(Math.PI / 6));
    const limit = (2 * 0.5 * Math.hypot(4, 2, 1.5) * pxPerRad) / FAR_PIXELS; // about 95 m
    const modelLimit = (limit * FAR_PIXELS) / MODEL_PIXELS; // about 24 m: nearer, the model
    const levels = Array.from({ length: 100 }, (_, i) => view.detail(10 * i, 0.75, 0, 0.5 * Math.hypot(4, 2, 1.5)));
    levels.forEach((level, i) => {
      const d = Math.hypot(10 * i + 1, 0.25);
      expect(level).toBe(10 * i > 400 ? OUT_OF_VIEW : d < modelLimit ? NEAR : d < limit ? MID : FAR);
    });
    expect(view.detail(0, 0.75, 50, 2.5)).toBe(OUT_OF_VIEW); // beside the camera
    updater.interpolate(1, view);
    // A box model has no box draw of its own: at middle distance it is drawn as its model.
    const near = levels.filter((l) => l === NEAR || l === MID).length;
    const far = levels.filter((l) => l === FAR).length;
    expect(near).toBeGreaterThan(5);
    expect(far).toBeGreaterThan(5);
    expect(updater.drawnCount).toBe(near + far);
    expect(updater.drawnFarCount).toBe(far);
    const world = updater.scene.getObjectByName("world")!;
    const model = world.getObjectByName("world-model-3") as THREE.Mesh;
    const roof = world.getObjectByName("world-model-3-far") as THREE.Mesh | THREE.Points;
    expect(model.geometry.drawRange.count / 36).toBe(near); // 12 triangles a box
    if (farKind === "points") {
      expect(roof).toBeInstanceOf(THREE.Points);
      expect(roof.geometry.drawRange.count).toBe(far); // one vertex each
      // On the box's roof, centred; sized from its footprint (sqrt(4 x 2) m) and the camera.
      expect(roof.geometry.getAttribute("position").getY(0)).toBeCloseTo(1.5, 5);
      expect(roof.geometry.getAttribute("side").getX(0)).toBeCloseTo(Math.sqrt(8), 5);
      const material = roof.material as THREE.ShaderMaterial;
      expect(material.uniforms.pixelsPerMetre.value).toBeCloseTo(pxPerRad, 3);
    } else {
      expect(roof).toBeInstanceOf(THREE.Mesh);
      expect(roof.geometry.drawRange.count / 6).toBe(far); // 2 triangles a roof
    }
    // Hovering either picks the object drawn there: a ray down onto the second box (near).
    const raycaster = new THREE.Raycaster(new THREE.Vector3(10, 20, 0), new THREE.Vector3(0, -1, 0));
    const hit = raycaster.intersectObjects(updater.pickTargets(), false)[0];
    expect(hit.object).toBe(model);
    expect(updater.idOf(hit)).toBe(2);
    // Far: the second far box (slot 1 of the far draw, not of the model's).
    raycaster.set(new THREE.Vector3(10 * (near + 1), 20, 0), new THREE.Vector3(0, -1, 0));
    const roofHit = raycaster.intersectObjects(updater.pickTargets(), false)[0];
    expect(roofHit.object).toBe(roof);
    expect(updater.idOf(roofHit)).toBe(near + 2);
    // Without a camera every object is its model again.
    updater.interpolate(1);
    expect(updater.drawnFarCount).toBe(0);
    expect(updater.drawnCount).toBe(100);
  });
  it("a batched pool of cars draws those at middle distance as one box each, and picks them", () => {
    const { updater, apply } = setup(false, "batched");
    // Cars (model 0: body and cabin, 24 triangles; 4 x 2 x 1.5 m) every 10 m along +x.
    apply(delta(Array.from({ length: 100 }, (_, i) => ({ id: i + 1, model: 0, x: 10 * i }))), null, true);
    const camera = new THREE.PerspectiveCamera(60, 16 / 9, 0.5, 400);
    camera.position.set(-1, 1, 0);
    camera.lookAt(10, 1, 0);
    camera.updateMatrixWorld();
    const view = new DetailPicker().setCamera(camera, 360);
    updater.interpolate(1, view);
    const levels = Array.from({ length: 100 }, (_, i) => view.detail(10 * i, 0.75, 0, 0.5 * Math.hypot(4, 2, 1.5)));
    const count = (level: number) => levels.filter((l) => l === level).length;
    expect(count(NEAR)).toBeGreaterThan(1);
    expect(count(MID)).toBeGreaterThan(5);
    expect(count(FAR)).toBeGreaterThan(5);
    expect(updater.drawnBoxCount).toBe(count(MID));
    expect(updater.drawnFarCount).toBe(count(FAR));
    expect(updater.drawnCount).toBe(count(NEAR) + count(MID) + count(FAR));
    const world = updater.scene.getObjectByName("world")!;
    const model = world.getObjectByName("world-model-0") as THREE.Mesh;
    const box = world.getObjectByName("world-model-0-box") as THREE.Mesh;
    expect(model.geometry.drawRange.count / 72).toBe(count(NEAR)); // 24 triangles a car
    expect(box.geometry.drawRange.count / 30).toBe(count(MID)); // 10 a box (no bottom)
    // The first box is the first car past the near ones, the car's size, its base on the ground.
    box.geometry.computeBoundingBox();
    const first = new THREE.Box3().setFromBufferAttribute(
      new THREE.BufferAttribute((box.geometry.getAttribute("position").array as Float32Array).slice(0, 24), 3),
    );
    expect(first.min.toArray().map((v) => +v.toFixed(4))).toEqual([10 * count(NEAR) - 2, 0, -1]);
    expect(first.max.toArray().map((v) => +v.toFixed(4))).toEqual([10 * count(NEAR) + 2, 1.5, 1]);
    // Hovering a box picks its car.
    const raycaster = new THREE.Raycaster(new THREE.Vector3(10 * (count(NEAR) + 1), 20, 0), new THREE.Vector3(0, -1, 0));
    const hit = raycaster.intersectObjects(updater.pickTargets(), false)[0];
    expect(hit.object).toBe(box);
    expect(updater.idOf(hit)).toBe(count(NEAR) + 2);
    // Without a camera every car is its model again.
    updater.interpolate(1);
    expect(updater.drawnBoxCount).toBe(0);
    expect(updater.drawnCount).toBe(100);
  });
});
