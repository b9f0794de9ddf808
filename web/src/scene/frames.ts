// The one conversion between roadsim's world frame (x east, y north, z up; heading
// counter-clockwise from x) and three.js' (y up): three (x, y, z) = world (x, z, -y), and a
// heading h is a rotation of h about three's y axis.

export function toThree(out: Float32Array | number[], k: number, x: number, y: number, z: number): void {
  out[k] = x;
  out[k + 1] = z;
  out[k + 2] = -y;
}

/** Interpolates headings the short way round (rad). */
export function lerpAngle(a: number, b: number, t: number): number {
  let d = b - a;
  if (d > Math.PI) d -= 2 * Math.PI;
  else if (d < -Math.PI) d += 2 * Math.PI;
  return a + d * t;
}

/**
 * Writes the column-major 4x4 matrix of a box of size (length, width, height) at a world
 * pose (x, y, z, heading) into `m` at offset `k`: translation * rotation about y * scale,
 * with the box's length along its heading and its base on the ground.
 */
export function writeBoxMatrix(
  m: Float32Array,
  k: number,
  x: number,
  y: number,
  z: number,
  heading: number,
  length: number,
  width: number,
  height: number,
): void {
  const c = Math.cos(heading);
  const s = Math.sin(heading);
  m[k] = c * length;
  m[k + 1] = 0;
  m[k + 2] = -s * length;
  m[k + 3] = 0;
  m[k + 4] = 0;
  m[k + 5] = height;
  m[k + 6] = 0;
  m[k + 7] = 0;
  m[k + 8] = s * width;
  m[k + 9] = 0;
  m[k + 10] = c * width;
  m[k + 11] = 0;
  m[k + 12] = x;
  m[k + 13] = z;
  m[k + 14] = -y;
  m[k + 15] = 1;
}
