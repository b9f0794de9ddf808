// World objects of one model share one mesh: one draw call for all of them (an
// InstancedMesh, or a batch placed on the CPU where WebGL is software: ./draws.ts; a
// batched pool draws far objects as points or roofs in a second draw, and those at middle
// distance as boxes in a third: ./detail.ts).
// Instances are packed: removing one moves the last into its place. The capacity doubles
// when full and halves when a quarter is used, so a pool follows the count both ways.
import * as THREE from "three";
import { FAR, MID, NEAR, OUT_OF_VIEW, type Detail } from "./detail";
import { BatchDraw, InstancedDraw, type DrawKind, type PoolDraw } from "./draws";
import { lerpAngle } from "./frames";

export const MIN_CAPACITY = 16;

export class InstancedPool {
  draw: PoolDraw;
  /** Batched: the objects drawn as their roof, far away (./detail.ts). */
  farDraw: PoolDraw | null = null;
  /** Batched: the objects drawn as a box, at middle distance (./detail.ts). */
  midDraw: PoolDraw | null = null;
  count = 0;
  ids: Int32Array; // by instance
  readonly index = new Map<number, number>(); // id -> instance
  private prev: Float32Array; // x, y, z, heading per instance (previous frame)
  private next: Float32Array; // (latest frame)
  private size: Float32Array; // length, width, height
  private colors: Float32Array; // r, g, b
  private moving: Uint8Array;
  private slots = new Int32Array(0); // batched and culled: the instance drawn in each slot
  private farSlots = new Int32Array(0); // the same for the far draw
  private midSlots = new Int32Array(0); // and for the box draw
  private shownAs = new Uint8Array(0); // batched and culled: each instance's last Detail
  private recoloured = new Uint8Array(0); // batched and culled: colour changed since drawn
  private culled = false; // whether the last frame drew the visible instances only

  constructor(
    readonly geometry: THREE.BufferGeometry,
    readonly material: THREE.Material,
    readonly parent: THREE.Object3D,
    readonly model: number,
    readonly kind: DrawKind = "instanced",
    capacity = MIN_CAPACITY,
    /** Batched: makes the draw of the far objects for a capacity (none: all drawn near). */
    readonly makeFar: ((capacity: number) => PoolDraw) | null = null,
    /** Batched: makes the draw of the objects at middle distance (none: drawn near). */
    readonly makeMid: ((capacity: number) => PoolDraw) | null = null,
  ) {
    this.ids = new Int32Array(capacity);
    this.prev = new Float32Array(4 * capacity);
    this.next = new Float32Array(4 * capacity);
    this.size = new Float32Array(3 * capacity);
    this.colors = new Float32Array(3 * capacity);
    this.moving = new Uint8Array(capacity);
    this.draw = this.makeDraw(capacity);
    this.farDraw = this.makeLevelDraw(capacity, FAR);
    this.midDraw = this.makeLevelDraw(capacity, MID);
  }

  /** The scene object that draws the pool. */
  get mesh(): THREE.Mesh {
    return this.draw.object as THREE.Mesh;
  }

  get capacity(): number {
    return this.ids.length;
  }

  private makeDraw(capacity: number): PoolDraw {
    const draw =
      this.kind === "batched"
        ? new BatchDraw(this.geometry, this.material, capacity)
        : new InstancedDraw(this.geometry, this.material, capacity);
    draw.setCount(this.count);
    const mesh = draw.object;
    mesh.userData.model = this.model;
    mesh.userData.pool = this;
    mesh.name = `world-model-${this.model}`;
    this.parent.add(mesh);
    return draw;
  }

  private makeLevelDraw(capacity: number, level: typeof FAR | typeof MID): PoolDraw | null {
    const make = level === FAR ? this.makeFar : this.makeMid;
    if (this.kind !== "batched" || !make) return null;
    const draw = make(capacity);
    draw.setCount(0); // until a culled frame puts objects in it
    const mesh = draw.object;
    mesh.userData.model = this.model;
    mesh.userData.pool = this;
    mesh.userData.level = level;
    mesh.userData.far = level === FAR;
    mesh.name = `world-model-${this.model}-${level === FAR ? "far" : "box"}`;
    this.parent.add(mesh);
    return draw;
  }

  private resize(capacity: number): void {
    const n = this.count;
    const grow = <T extends Float32Array | Int32Array | Uint8Array>(a: T, per: number): T => {
      const b = new (a.constructor as new (n: number) => T)(per * capacity);
      b.set(a.subarray(0, per * n));
      return b;
    };
    this.ids = grow(this.ids, 1);
    this.prev = grow(this.prev, 4);
    this.next = grow(this.next, 4);
    this.size = grow(this.size, 3);
    this.colors = grow(this.colors, 3);
    this.moving = grow(this.moving, 1);
    this.parent.remove(this.draw.object);
    this.draw.dispose();
    this.draw = this.makeDraw(capacity);
    for (const draw of [this.farDraw, this.midDraw]) {
      if (!draw) continue;
      this.parent.remove(draw.object);
      draw.dispose();
    }
    this.farDraw = this.makeLevelDraw(capacity, FAR);
    this.midDraw = this.makeLevelDraw(capacity, MID);
    this.culled = false; // new buffers: one slot per instance until the next culled frame
    this.writeAll(1);
  }

  has(id: number): boolean {
    return this.index.has(id);
  }

  add(id: number, pose: ArrayLike<number>, size: ArrayLike<number>): void {
    if (this.count === this.capacity) this.resize(2 * this.capacity);
    const i = this.count++;
    this.ids[i] = id;
    this.index.set(id, i);
    for (let j = 0; j < 4; j++) this.prev[4 * i + j] = this.next[4 * i + j] = pose[j];
    for (let j = 0; j < 3; j++) this.size[3 * i + j] = size[j];
    this.moving[i] = 0;
    if (i < this.recoloured.length) this.recoloured[i] = 1;
    this.draw.setCount(this.count);
    this.writeOne(i, 1);
  }

  /** A new pose for the next frame; the previous one becomes where it is seen now. */
  move(id: number, pose: ArrayLike<number>, from: number): void {
    const i = this.index.get(id);
    if (i === undefined) return;
    const k = 4 * i;
    const p = this.prev, q = this.next;
    if (q[k] === pose[0] && q[k + 1] === pose[1] && q[k + 2] === pose[2] && q[k + 3] === pose[3]) {
      if (this.moving[i]) {
        p.set(q.subarray(k, k + 4), k);
        this.moving[i] = 0;
        this.writeOne(i, 1);
      }
      return;
    }
    // Start from the pose shown at `from` (in [0, 1]) so that a late frame does not jump.
    p[k] = p[k] + (q[k] - p[k]) * from;
    p[k + 1] = p[k + 1] + (q[k + 1] - p[k + 1]) * from;
    p[k + 2] = p[k + 2] + (q[k + 2] - p[k + 2]) * from;
    p[k + 3] = lerpAngle(p[k + 3], q[k + 3], from);
    q[k] = pose[0];
    q[k + 1] = pose[1];
    q[k + 2] = pose[2];
    q[k + 3] = pose[3];
    this.moving[i] = 1;
  }

  /** Puts an object where it is, with no motion to interpolate (after a key frame). */
  place(id: number, pose: ArrayLike<number>): void {
    const i = this.index.get(id);
    if (i === undefined) return;
    for (let j = 0; j < 4; j++) this.prev[4 * i + j] = this.next[4 * i + j] = pose[j];
    this.moving[i] = 0;
    this.writeOne(i, 1);
  }

  remove(id: number): void {
    const i = this.index.get(id);
    if (i === undefined) return;
    const last = this.count - 1;
    if (i !== last) {
      const moved = this.ids[last];
      this.ids[i] = moved;
      this.index.set(moved, i);
      this.prev.copyWithin(4 * i, 4 * last, 4 * last + 4);
      this.next.copyWithin(4 * i, 4 * last, 4 * last + 4);
      this.size.copyWithin(3 * i, 3 * last, 3 * last + 3);
      this.colors.copyWithin(3 * i, 3 * last, 3 * last + 3);
      this.moving[i] = this.moving[last];
      this.writeOne(i, 1);
      this.writeColor(i);
      if (i < this.recoloured.length) this.recoloured[i] = 1;
    }
    this.index.delete(id);
    this.count = last;
    this.draw.setCount(this.count);
    if (this.capacity > MIN_CAPACITY && this.count <= this.capacity / 4) {
      this.resize(Math.max(MIN_CAPACITY, this.capacity / 2));
    }
  }

  setColor(id: number, color: THREE.Color): void {
    const i = this.index.get(id);
    if (i === undefined) return;
    const k = 3 * i;
    if (this.colors[k] === color.r && this.colors[k + 1] === color.g && this.colors[k + 2] === color.b) return;
    this.colors[k] = color.r;
    this.colors[k + 1] = color.g;
    this.colors[k + 2] = color.b;
    this.writeColor(i);
    if (i < this.recoloured.length) this.recoloured[i] = 1;
  }

  /** The pose shown at `t` in [0, 1] between the previous frame and the latest. */
  poseAt(id: number, t: number): [number, number, number, number] | null {
    const i = this.index.get(id);
    if (i === undefined) return null;
    const k = 4 * i, p = this.prev, q = this.next;
    return [p[k] + (q[k] - p[k]) * t, p[k + 1] + (q[k + 1] - p[k + 1]) * t, p[k + 2] + (q[k + 2] - p[k + 2]) * t, lerpAngle(p[k + 3], q[k + 3], t)];
  }

  /**
   * Moves the instances to `t` in [0, 1] between the previous frame and the latest.
   *
   * With `detail` (of a bounding sphere in three.js' frame, ./detail.ts), a batched pool
   * draws only the instances in view, packed into the first slots of its model's batch
   * (near), its box batch (middle distance) or its far draw: software WebGL then places,
   * uploads and draws the objects in view, the far ones with 1 vertex (4 as roofs). Otherwise only the moving instances
   * are written, all with the full model.
   */
  interpolate(t: number, detail?: (x: number, y: number, z: number, r: number) => Detail): void {
    if (this.kind !== "batched" || !detail) {
      this.farDraw?.setCount(0);
      this.midDraw?.setCount(0);
      if (this.culled) {
        this.culled = false;
        this.writeAll(t); // back to one slot per instance
      }
      this.draw.setCount(this.count);
      for (let i = 0; i < this.count; i++) {
        if (this.moving[i]) {
          this.writeOne(i, t);
          if (t >= 1) this.moving[i] = 0; // arrived: nothing to write until it moves again
        }
      }
      return;
    }
    if (this.slots.length !== this.capacity) {
      this.slots = new Int32Array(this.capacity).fill(-1);
      this.farSlots = new Int32Array(this.capacity).fill(-1);
      this.midSlots = new Int32Array(this.capacity).fill(-1);
      this.shownAs = new Uint8Array(this.capacity);
      this.recoloured = new Uint8Array(this.capacity);
      this.culled = false;
    }
    const p = this.prev, q = this.next, s = this.size, c = this.colors;
    const far = this.farDraw;
    const mid = this.midDraw;
    let j = 0; // near slots used
    let f = 0; // far slots used
    let m = 0; // box slots used
    for (let i = 0; i < this.count; i++) {
      const k = 4 * i;
      const x = p[k] + (q[k] - p[k]) * t;
      const y = p[k + 1] + (q[k + 1] - p[k + 1]) * t;
      const z = p[k + 2] + (q[k + 2] - p[k + 2]) * t;
      const l = s[3 * i], w = s[3 * i + 1], h = s[3 * i + 2];
      let level = detail(x, z + 0.5 * h, -y, 0.5 * Math.hypot(l, w, h));
      if (level === OUT_OF_VIEW) continue;
      if (level === FAR && !far) level = MID;
      if (level === MID && !mid) level = NEAR;
      const draw = level === FAR ? far! : level === MID ? mid! : this.draw;
      const slots = level === FAR ? this.farSlots : level === MID ? this.midSlots : this.slots;
      const slot = level === FAR ? f++ : level === MID ? m++ : j++;
      draw.writePose(slot, x, y, z, lerpAngle(p[k + 3], q[k + 3], t), l, w, h);
      // Colours change rarely: upload them only where a slot holds another instance.
      if (!this.culled || slots[slot] !== i || this.shownAs[i] !== level || this.recoloured[i]) {
        draw.writeColor(slot, c[3 * i], c[3 * i + 1], c[3 * i + 2]);
        this.recoloured[i] = 0;
      }
      slots[slot] = i;
      this.shownAs[i] = level;
    }
    this.draw.setCount(j);
    far?.setCount(f);
    mid?.setCount(m);
    this.culled = true;
  }

  /** The id drawn in a slot of the model's draw, or of the draw of another level (see `interpolate`). */
  idAtSlot(slot: number, level: Detail = NEAR): number {
    if (!this.culled) return this.ids[slot];
    return this.ids[(level === FAR ? this.farSlots : level === MID ? this.midSlots : this.slots)[slot]];
  }

  /** The draw of a level of detail (NEAR: the model's), null where the pool has none. */
  drawOf(level: Detail): PoolDraw | null {
    return level === FAR ? this.farDraw : level === MID ? this.midDraw : this.draw;
  }

  /** Instances drawn in the last frame. */
  get drawn(): number {
    return this.culled ? this.drawnCount(this.draw) + this.drawnFar + this.drawnBoxes : this.count;
  }

  /** Instances drawn as their roof in the last frame. */
  get drawnFar(): number {
    return this.culled && this.farDraw ? this.drawnCount(this.farDraw) : 0;
  }

  /** Instances drawn as a box in the last frame. */
  get drawnBoxes(): number {
    return this.culled && this.midDraw ? this.drawnCount(this.midDraw) : 0;
  }

  private drawnCount(draw: PoolDraw): number {
    const g = draw.object.geometry;
    const perObject = g.index ? g.index.count / this.capacity : 1;
    return Math.round(g.drawRange.count / perObject);
  }

  private writeAll(t: number): void {
    for (let i = 0; i < this.count; i++) {
      this.writeOne(i, t);
      this.writeColor(i);
    }
  }

  // While culled, slots hold other instances than their index: the next frame's
  // `interpolate` writes everything drawn, so direct writes would only clobber a slot.
  private writeOne(i: number, t: number): void {
    if (this.culled) return;
    const k = 4 * i, p = this.prev, q = this.next, s = this.size;
    this.draw.writePose(
      i,
      p[k] + (q[k] - p[k]) * t,
      p[k + 1] + (q[k + 1] - p[k + 1]) * t,
      p[k + 2] + (q[k + 2] - p[k + 2]) * t,
      lerpAngle(p[k + 3], q[k + 3], t),
      s[3 * i],
      s[3 * i + 1],
      s[3 * i + 2],
    );
  }

  private writeColor(i: number): void {
    if (this.culled) return;
    this.draw.writeColor(i, this.colors[3 * i], this.colors[3 * i + 1], this.colors[3 * i + 2]);
  }

  dispose(): void {
    for (const draw of [this.draw, this.farDraw, this.midDraw]) {
      if (!draw) continue;
      this.parent.remove(draw.object);
      draw.dispose();
    }
  }
}
