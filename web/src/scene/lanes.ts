// Lane surfaces and road marks from the lane sensor, as triangle strips in three.js' frame.
// Lanes are strips between each lane's inner and outer border (columns of its section's
// sample grid); road marks are strips of their width around each piece's centre line,
// lifted a little above the lanes.
import * as THREE from "three";
import type { LaneSensor } from "../protocol";
import { toThree } from "./frames";

export const MARK_LIFT_M = 0.03;

/** Lane colours by OpenDRIVE lane type (lower case); others use `OTHER_LANE`. */
const LANE_COLORS: Record<string, number> = {
  driving: 0x3b3f45,
  entry: 0x3b3f45,
  exit: 0x3b3f45,
  onramp: 0x3b3f45,
  offramp: 0x3b3f45,
  connectingramp: 0x3b3f45,
  bidirectional: 0x3b3f45,
  bus: 0x4a3b3b,
  bike: 0x5a4040,
  biking: 0x5a4040,
  sidewalk: 0x9a9a94,
  walking: 0x9a9a94,
  curb: 0xb0b0aa,
  shoulder: 0x5b5e58,
  border: 0x6b6d63,
  median: 0x4f6b3f,
  parking: 0x45505a,
  restricted: 0x6a5a45,
  stop: 0x4a4a4a,
};
const OTHER_LANE = 0x585a55;
const MARK_COLORS: Record<string, number> = { white: 0xf2f2f2, standard: 0xf2f2f2, yellow: 0xf2c200 };

/** Triangles and their vertices, with the index range of each lane or mark piece. */
export interface Strips {
  positions: Float32Array;
  colors: Float32Array;
  indices: Uint32Array;
  ranges: Int32Array; // part k uses indices[ranges[k]..ranges[k+1]]
}

class StripWriter {
  positions: number[] = [];
  colors: number[] = [];
  indices: number[] = [];
  ranges: number[] = [0];
  vertex(x: number, y: number, z: number, c: THREE.Color): number {
    const k = this.positions.length;
    this.positions.length += 3;
    toThree(this.positions, k, x, y, z);
    this.colors.push(c.r, c.g, c.b);
    return k / 3;
  }
  quad(a: number, b: number, c: number, d: number): void {
    // a, b along one side, c, d along the other; both windings are fine (double-sided off):
    // counter-clockwise seen from above in three.js' frame.
    this.indices.push(a, c, b, b, c, d);
  }
  endPart(): void {
    this.ranges.push(this.indices.length);
  }
  done(): Strips {
    return {
      positions: new Float32Array(this.positions),
      colors: new Float32Array(this.colors),
      indices: new Uint32Array(this.indices),
      ranges: new Int32Array(this.ranges),
    };
  }
}

export function laneStrips(lanes: LaneSensor): Strips {
  const w = new StripWriter();
  const color = new THREE.Color();
  let base = 0; // first point of the section
  let col0 = 0; // first column of the section
  for (let k = 0; k < lanes.rows.length; k++) {
    const m = lanes.rows[k];
    const n = lanes.cols[k];
    const p = lanes.points;
    for (let j = 0; j < n; j++) {
      const id = lanes.laneId[col0 + j];
      if (id === 0) continue;
      const inner = id > 0 ? j + 1 : j - 1;
      if (inner < 0 || inner >= n) continue;
      const type = (lanes.laneTypes[lanes.laneType[col0 + j]] ?? "none").toLowerCase();
      color.setHex(LANE_COLORS[type] ?? OTHER_LANE);
      let prevOuter = -1;
      let prevInner = -1;
      for (let r = 0; r < m; r++) {
        const o = 3 * (base + r * n + j);
        const i = 3 * (base + r * n + inner);
        const vo = w.vertex(p[o], p[o + 1], p[o + 2], color);
        const vi = w.vertex(p[i], p[i + 1], p[i + 2], color);
        if (r > 0) {
          if (id < 0) w.quad(prevInner, vi, prevOuter, vo);
          else w.quad(prevOuter, vo, prevInner, vi);
        }
        prevOuter = vo;
        prevInner = vi;
      }
      w.endPart();
    }
    base += m * n;
    col0 += n;
  }
  return w.done();
}

export function markStrips(lanes: LaneSensor): Strips {
  const w = new StripWriter();
  const color = new THREE.Color();
  const p = lanes.markPoints;
  for (let k = 0; k + 1 < lanes.markStart.length; k++) {
    const a = lanes.markStart[k];
    const b = lanes.markStart[k + 1];
    if (b - a < 2) continue;
    const half = 0.5 * lanes.markWidth[k];
    color.setHex(MARK_COLORS[lanes.colors[lanes.markColor[k]]?.toLowerCase()] ?? 0xf2f2f2);
    let prevL = -1;
    let prevR = -1;
    for (let q = a; q < b; q++) {
      const q0 = Math.max(a, q - 1);
      const q1 = Math.min(b - 1, q + 1);
      let dx = p[3 * q1] - p[3 * q0];
      let dy = p[3 * q1 + 1] - p[3 * q0 + 1];
      const len = Math.hypot(dx, dy) || 1;
      dx /= len;
      dy /= len;
      const x = p[3 * q], y = p[3 * q + 1], z = p[3 * q + 2] + MARK_LIFT_M;
      const vl = w.vertex(x - dy * half, y + dx * half, z, color);
      const vr = w.vertex(x + dy * half, y - dx * half, z, color);
      if (q > a) w.quad(prevR, vr, prevL, vl);
      prevL = vl;
      prevR = vr;
    }
    w.endPart();
  }
  return w.done();
}

export function stripGeometry(s: Strips, from = 0, to = s.ranges.length - 1): THREE.BufferGeometry {
  const g = new THREE.BufferGeometry();
  g.setAttribute("position", new THREE.BufferAttribute(s.positions, 3));
  g.setAttribute("color", new THREE.BufferAttribute(s.colors, 3));
  g.setIndex(new THREE.BufferAttribute(s.indices.subarray(s.ranges[from], s.ranges[to]), 1));
  g.computeBoundingSphere();
  return g;
}
