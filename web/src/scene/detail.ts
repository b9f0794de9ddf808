// Level of detail for batched objects (software WebGL, ./draws.ts): an object whose
// bounding sphere spans fewer than FAR_PIXELS on screen is drawn as one point sprite
// (./points.ts; or its roof, a quad, with the updater's `far: "roofs"`) in its colour
// instead of its model; nearer ones keep the full model.
import * as THREE from "three";

/** Below this many pixels across (bounding sphere's diameter) an object is drawn far. */
export const FAR_PIXELS = 16;

export const OUT_OF_VIEW = 0;
export const NEAR = 1;
export const FAR = 2;
export type Detail = typeof OUT_OF_VIEW | typeof NEAR | typeof FAR;

/** Picks each object's detail from a perspective camera (three.js frame). */
export class DetailPicker {
  private readonly frustum = new THREE.Frustum();
  private readonly matrix = new THREE.Matrix4();
  private readonly eye = new THREE.Vector3();
  private readonly sphere = new THREE.Sphere();
  private scale = 1; // screen pixels per metre at 1 m from the eye

  /** Screen pixels per metre at 1 m from the eye (the drawing buffer's). */
  get pixelsPerMetre(): number {
    return this.scale;
  }

  /** Takes the camera's current matrices; `heightPx` is the drawing buffer's height. */
  setCamera(camera: THREE.PerspectiveCamera, heightPx: number): this {
    this.frustum.setFromProjectionMatrix(this.matrix.multiplyMatrices(camera.projectionMatrix, camera.matrixWorldInverse));
    this.eye.setFromMatrixPosition(camera.matrixWorld);
    this.scale = heightPx / (2 * Math.tan(THREE.MathUtils.degToRad(camera.fov) / 2) * camera.zoom);
    return this;
  }

  /** The detail of a bounding sphere: centre (x, y, z) in three.js' frame, radius r (m). */
  detail(x: number, y: number, z: number, r: number): Detail {
    this.sphere.center.set(x, y, z);
    this.sphere.radius = r;
    if (!this.frustum.intersectsSphere(this.sphere)) return OUT_OF_VIEW;
    const d = this.sphere.center.distanceTo(this.eye);
    return 2 * r * this.scale < FAR_PIXELS * d ? FAR : NEAR;
  }
}
