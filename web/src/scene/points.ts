// Far objects as one point sprite each (gl.POINTS): a square on screen, centred on the
// object's roof, with the area of its footprint at that distance. On software WebGL a
// point is one vertex to transform where a roof quad (./detail.ts) is four, and one
// primitive to set up where the quad is two. The square is no outline of the object (its
// heading is lost): a sprite cut to the box's outline in the fragment shader was tried,
// and more than doubled the frame time on SwiftShader (bigger sprites, a discard per pixel).
import * as THREE from "three";
import type { PoolDraw } from "./draws";

const VERTEX = /* glsl */ `
uniform float pixelsPerMetre; // screen pixels per metre at 1 m from the eye
attribute float side; // the footprint's square side (m)
attribute vec3 tint;
varying vec3 vTint;
void main() {
  vec4 eye = modelViewMatrix * vec4(position, 1.0);
  gl_Position = projectionMatrix * eye;
  gl_PointSize = max(1.0, side * pixelsPerMetre / max(-eye.z, 1e-3));
  vTint = tint;
}`;

const FRAGMENT = /* glsl */ `
varying vec3 vTint;
void main() {
  gl_FragColor = vec4(vTint, 1.0);
  #include <colorspace_fragment>
}`;

/** The material of every point draw; `setScale` each frame from the camera (./detail.ts). */
export function pointMaterial(): THREE.ShaderMaterial {
  return new THREE.ShaderMaterial({
    uniforms: { pixelsPerMetre: { value: 1 } },
    vertexShader: VERTEX,
    fragmentShader: FRAGMENT,
  });
}

export class PointDraw implements PoolDraw {
  readonly object: THREE.Points;
  private readonly roof: number; // the model's top, as a fraction of its height
  private readonly position: THREE.BufferAttribute;
  private readonly side: THREE.BufferAttribute;
  private readonly tint: THREE.BufferAttribute;

  constructor(geometry: THREE.BufferGeometry, material: THREE.ShaderMaterial, capacity: number) {
    geometry.computeBoundingBox();
    this.roof = geometry.boundingBox!.max.y;
    const g = new THREE.BufferGeometry();
    this.position = new THREE.BufferAttribute(new Float32Array(3 * capacity), 3).setUsage(THREE.DynamicDrawUsage);
    this.side = new THREE.BufferAttribute(new Float32Array(capacity), 1).setUsage(THREE.DynamicDrawUsage);
    this.tint = new THREE.BufferAttribute(new Float32Array(3 * capacity), 3).setUsage(THREE.DynamicDrawUsage);
    g.setAttribute("position", this.position);
    g.setAttribute("side", this.side);
    g.setAttribute("tint", this.tint);
    g.setDrawRange(0, 0);
    this.object = new THREE.Points(g, material);
    this.object.frustumCulled = false;
  }

  setCount(count: number): void {
    this.object.geometry.setDrawRange(0, count);
  }

  writePose(i: number, x: number, y: number, z: number, _h: number, l: number, w: number, ht: number): void {
    const p = this.position.array as Float32Array;
    p[3 * i] = x; // three.js' frame (./frames.ts)
    p[3 * i + 1] = z + this.roof * ht;
    p[3 * i + 2] = -y;
    (this.side.array as Float32Array)[i] = Math.sqrt(l * w);
    this.position.needsUpdate = true;
    this.side.needsUpdate = true;
  }

  writeColor(i: number, r: number, g: number, b: number): void {
    (this.tint.array as Float32Array).set([r, g, b], 3 * i);
    this.tint.needsUpdate = true;
  }

  slotOf(hit: THREE.Intersection): number | undefined {
    return hit.index ?? undefined;
  }

  centreOf(i: number): THREE.Vector3 {
    return new THREE.Vector3().fromBufferAttribute(this.position, i);
  }

  prepareRaycast(): void {
    this.object.geometry.computeBoundingSphere();
  }

  dispose(): void {
    this.object.geometry.dispose();
  }
}
