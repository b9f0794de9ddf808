// Two ways to draw the objects of one model in one call, behind one interface:
//
// - `InstancedDraw`: a THREE.InstancedMesh; the GPU places each instance from its matrix.
//   Best on a hardware GPU: a frame uploads 64 bytes per moving object.
// - `BatchDraw`: one mesh whose vertices are every object's, placed on the CPU. Software
//   WebGL (SwiftShader, llvmpipe) pays a fixed cost per instance of an instanced draw: 5,000
//   instanced boxes took 183 ms a frame in headless Chromium here, the same boxes as one
//   mesh 33 ms. So software renderers get this one (`Rendering` picks; ?draw= forces).
//   Its light is baked into the vertex colours (darker toward the ground) and drawn unlit:
//   per-pixel lighting halved the frame rate there. The colours are display (sRGB) values
//   (`Rendering` turns three.js' colour management off).
import * as THREE from "three";
import { mergeVertices } from "three/examples/jsm/utils/BufferGeometryUtils.js";
import { writeBoxMatrix } from "./frames";

export type DrawKind = "instanced" | "batched";

export interface PoolDraw {
  readonly object: THREE.Mesh | THREE.Points;
  setCount(count: number): void;
  /** Places slot i: world pose (x, y, z minus origin, heading) and box size. */
  writePose(i: number, x: number, y: number, z: number, h: number, l: number, w: number, ht: number): void;
  writeColor(i: number, r: number, g: number, b: number): void;
  /** The slot an intersection with `object` hit. */
  slotOf(hit: THREE.Intersection): number | undefined;
  /** Where slot i is drawn (three.js frame), for tests. */
  centreOf(i: number): THREE.Vector3;
  /** Makes the bounds current before a raycast. */
  prepareRaycast(): void;
  dispose(): void;
}

export class InstancedDraw implements PoolDraw {
  readonly object: THREE.InstancedMesh;

  constructor(geometry: THREE.BufferGeometry, material: THREE.Material, capacity: number) {
    const mesh = new THREE.InstancedMesh(geometry, material, capacity);
    mesh.instanceMatrix.setUsage(THREE.DynamicDrawUsage);
    mesh.instanceColor = new THREE.InstancedBufferAttribute(new Float32Array(3 * capacity), 3);
    mesh.count = 0;
    mesh.frustumCulled = false; // instances spread over the map; the bounds would be stale
    this.object = mesh;
  }

  setCount(count: number): void {
    this.object.count = count;
  }

  writePose(i: number, x: number, y: number, z: number, h: number, l: number, w: number, ht: number): void {
    writeBoxMatrix(this.object.instanceMatrix.array as Float32Array, 16 * i, x, y, z, h, l, w, ht);
    this.object.instanceMatrix.needsUpdate = true;
  }

  writeColor(i: number, r: number, g: number, b: number): void {
    const c = this.object.instanceColor!;
    (c.array as Float32Array).set([r, g, b], 3 * i);
    c.needsUpdate = true;
  }

  slotOf(hit: THREE.Intersection): number | undefined {
    return hit.instanceId;
  }

  centreOf(i: number): THREE.Vector3 {
    const m = new THREE.Matrix4();
    this.object.getMatrixAt(i, m);
    return new THREE.Vector3().setFromMatrixPosition(m);
  }

  prepareRaycast(): void {}

  dispose(): void {
    this.object.dispose();
  }
}

export class BatchDraw implements PoolDraw {
  readonly object: THREE.Mesh;
  private readonly base: Float32Array; // the model's vertices (unit size)
  private readonly shade: Float32Array; // baked light per vertex: sides darken toward the ground
  private readonly perIndex: number; // indices per object
  private readonly position: THREE.BufferAttribute;
  private readonly color: THREE.BufferAttribute;

  constructor(geometry: THREE.BufferGeometry, material: THREE.Material, capacity: number) {
    // Corners shared between faces (the material shades flat): fewer vertices to place.
    const shape = new THREE.BufferGeometry().setAttribute("position", geometry.getAttribute("position"));
    shape.setIndex(geometry.getIndex());
    const merged = mergeVertices(shape);
    this.base = Float32Array.from(merged.getAttribute("position").array as ArrayLike<number>);
    const baseIndex = merged.getIndex()!.array;
    const v = this.base.length / 3;
    this.shade = new Float32Array(v);
    for (let j = 0; j < v; j++) this.shade[j] = 0.75 + 0.25 * Math.min(1, Math.max(0, this.base[3 * j + 1]));
    this.perIndex = baseIndex.length;
    const index = new Uint32Array(capacity * this.perIndex);
    for (let i = 0; i < capacity; i++)
      for (let k = 0; k < this.perIndex; k++) index[i * this.perIndex + k] = baseIndex[k] + i * v;
    const g = new THREE.BufferGeometry();
    this.position = new THREE.BufferAttribute(new Float32Array(3 * v * capacity), 3).setUsage(THREE.DynamicDrawUsage);
    this.color = new THREE.BufferAttribute(new Float32Array(3 * v * capacity), 3).setUsage(THREE.DynamicDrawUsage);
    g.setAttribute("position", this.position);
    g.setAttribute("color", this.color);
    g.setIndex(new THREE.BufferAttribute(index, 1));
    g.setDrawRange(0, 0);
    this.object = new THREE.Mesh(g, material);
    this.object.frustumCulled = false;
  }

  setCount(count: number): void {
    this.object.geometry.setDrawRange(0, count * this.perIndex);
  }

  writePose(i: number, x: number, y: number, z: number, h: number, l: number, w: number, ht: number): void {
    // As writeBoxMatrix's matrix: three (X, Y, Z) = (x + c l px + s w pz, z + ht py, -y - s l px + c w pz)
    const c = Math.cos(h);
    const s = Math.sin(h);
    const p = this.base;
    const out = this.position.array as Float32Array;
    const v = p.length / 3;
    let k = 3 * v * i;
    for (let j = 0; j < p.length; j += 3) {
      const px = p[j] * l;
      const pz = p[j + 2] * w;
      out[k++] = x + c * px + s * pz;
      out[k++] = z + p[j + 1] * ht;
      out[k++] = -y - s * px + c * pz;
    }
    this.position.needsUpdate = true;
  }

  writeColor(i: number, r: number, g: number, b: number): void {
    const a = this.color.array as Float32Array;
    const v = this.base.length / 3;
    for (let j = 0, k = 3 * v * i; j < v; j++, k += 3) {
      const f = this.shade[j];
      a[k] = r * f;
      a[k + 1] = g * f;
      a[k + 2] = b * f;
    }
    this.color.needsUpdate = true;
  }

  slotOf(hit: THREE.Intersection): number | undefined {
    return hit.faceIndex === undefined || hit.faceIndex === null ? undefined : Math.floor((3 * hit.faceIndex) / this.perIndex);
  }

  centreOf(i: number): THREE.Vector3 {
    const v = this.base.length / 3;
    const a = this.position.array as Float32Array;
    const c = new THREE.Vector3();
    for (let k = 3 * v * i; k < 3 * v * (i + 1); k += 3) c.add(new THREE.Vector3(a[k], a[k + 1], a[k + 2]));
    return c.divideScalar(v);
  }

  prepareRaycast(): void {
    this.object.geometry.computeBoundingSphere();
  }

  dispose(): void {
    this.object.geometry.dispose();
  }
}
