// Level of detail for batched objects (software WebGL, ./draws.ts), by how many pixels
// an object's bounding sphere spans on screen: under FAR_PIXELS it is drawn as one point
// sprite (./points.ts; or its roof, a quad, with the updater's `far: "roofs"`) in its
// colour; under MODEL_PIXELS as one box of its size (10 triangles: a truck's body and cabin
// are 24, and SwiftShader pays per triangle); from there on as its model.
import * as THREE from "three";

/** Below this many pixels across (bounding sphere's diameter) an object is drawn far. */
export const FAR_PIXELS = 16;
/** From this many pixels across an object is drawn as its model, below as a box. */
export const MODEL_PIXELS = 64;

export const OUT_OF_VIEW = 0;
export const NEAR = 1;
export const FAR = 2;
export const MID = 3;
export type Detail = typeof OUT_OF_VIEW | typeof NEAR | typeof FAR | typeof MID;

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
    const pixels = (2 * r * this.scale) / d;
    return pixels < FAR_PIXELS ? FAR : pixels < MODEL_PIXELS ? MID : NEAR;
  }
}
