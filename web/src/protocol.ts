// The feed's frame messages (roadsim.viewer.sink), decoded. Arrays arrive as msgpack bin
// (little-endian bytes); they are copied into aligned typed arrays here.
import { decode, encode } from "@msgpack/msgpack";

export type Pose = [number, number, number, number]; // x, y, z (m), heading (rad); world frame

export interface EgoSensor {
  id: number;
  model: string;
  pose: Pose;
  size: [number, number, number]; // length, width, height (m)
  speed: number;
  accel: number;
  steer: number;
  collided: boolean;
}

/** What changed in the world since the previous frame (everything in a key frame). */
export interface WorldDelta {
  add: { id: Int32Array; kind: Uint8Array; model: Uint8Array; size: Float32Array };
  remove: Int32Array;
  pose: { id: Int32Array; xyzhv: Float32Array };
  collided: Int32Array;
  count: number;
  scripts?: Script[];
}

export interface Script {
  id: number;
  name: string;
  kind: string;
  path: Float32Array; // x, y, z per point (world frame minus origin)
  radius: number; // creation radius (m); 0: always
}

export interface LaneSensor {
  version: number;
  sections: Int32Array;
  rows: Int32Array; // samples along s per section
  cols: Int32Array; // borders per section, leftmost lane first (the center lane included)
  points: Float32Array; // per section: rows x cols x 3
  laneId: Int8Array; // per column
  laneType: Uint8Array; // per column, code into laneTypes
  markStart: Int32Array; // piece k is markPoints[markStart[k]..markStart[k+1]] (points)
  markPoints: Float32Array;
  markWidth: Float32Array;
  markType: Uint8Array;
  markColor: Uint8Array;
  laneTypes: string[];
  markTypes: string[];
  colors: string[];
}

export interface Status {
  mode: "live" | "replay" | "attached" | string;
  playing?: boolean;
  speed?: number | "max";
  rtf?: number;
  first?: number;
  last?: number;
  sensors?: Record<string, boolean>;
  error?: string; // why the session stopped
}

export interface Info {
  scenario: string;
  map: string;
  dt: number;
  every: number;
  origin: [number, number, number];
  models: string[];
  kinds: string[];
}

export interface Lidar {
  name: string;
  points: Float32Array;
  classes: Uint8Array;
  total: number;
}
export interface Rays {
  name: string;
  segments: Float32Array;
  rays: number;
}
export interface DriverLinks {
  name: string;
  id: number;
  front: number;
  rear: number;
  front_left: number;
  rear_left: number;
  front_right: number;
  rear_right: number;
}
export interface CameraFrame {
  name: string;
  width: number;
  height: number;
  color: Uint8Array;
  depth: Uint8Array;
  segmentation: Uint8Array;
}
export interface Sensors {
  lidar?: Lidar[];
  raytracer?: Rays[];
  driver?: DriverLinks[];
  camera?: CameraFrame[];
}

export interface FrameMessage {
  frame: number;
  time: number;
  key: boolean;
  egoSensor: EgoSensor | null;
  worldSensor: WorldDelta;
  laneSensor: LaneSensor | null;
  laneVersion: number;
  sensors: Sensors;
  status: Status;
  info?: Info;
  bytes: number;
}

type Raw = Record<string, unknown>;

function bytes(v: unknown): Uint8Array {
  return v instanceof Uint8Array ? v : new Uint8Array(0);
}
// Copies: the bytes may sit at an odd offset inside the message.
const f32 = (v: unknown) => new Float32Array(bytes(v).slice().buffer);
const i32 = (v: unknown) => new Int32Array(bytes(v).slice().buffer);
const u8 = (v: unknown) => bytes(v).slice();
const i8 = (v: unknown) => new Int8Array(bytes(v).slice().buffer);

function world(raw: Raw): WorldDelta {
  const add = raw.add as Raw;
  const pose = raw.pose as Raw;
  const out: WorldDelta = {
    add: { id: i32(add.id), kind: u8(add.kind), model: u8(add.model), size: f32(add.size) },
    remove: i32(raw.remove),
    pose: { id: i32(pose.id), xyzhv: f32(pose.xyzhv) },
    collided: i32(raw.collided),
    count: raw.count as number,
  };
  if (Array.isArray(raw.scripts)) {
    out.scripts = (raw.scripts as Raw[]).map((s) => ({
      id: s.id as number,
      name: s.name as string,
      kind: s.kind as string,
      path: f32(s.path),
      radius: s.radius as number,
    }));
  }
  return out;
}

export function decodeLanes(raw: Raw): LaneSensor {
  return {
    version: raw.version as number,
    sections: i32(raw.sections),
    rows: i32(raw.rows),
    cols: i32(raw.cols),
    points: f32(raw.points),
    laneId: i8(raw.lane_id),
    laneType: u8(raw.lane_type),
    markStart: i32(raw.mark_start),
    markPoints: f32(raw.mark_points),
    markWidth: f32(raw.mark_width),
    markType: u8(raw.mark_type),
    markColor: u8(raw.mark_color),
    laneTypes: raw.lane_types as string[],
    markTypes: raw.mark_types as string[],
    colors: raw.colors as string[],
  };
}

function sensors(raw: Raw | undefined): Sensors {
  const out: Sensors = {};
  if (!raw) return out;
  if (Array.isArray(raw.lidar))
    out.lidar = (raw.lidar as Raw[]).map((l) => ({
      name: l.name as string,
      points: f32(l.points),
      classes: u8(l.classes),
      total: l.total as number,
    }));
  if (Array.isArray(raw.raytracer))
    out.raytracer = (raw.raytracer as Raw[]).map((r) => ({
      name: r.name as string,
      segments: f32(r.segments),
      rays: r.rays as number,
    }));
  if (Array.isArray(raw.driver)) out.driver = raw.driver as unknown as DriverLinks[];
  if (Array.isArray(raw.camera))
    out.camera = (raw.camera as Raw[]).map((c) => ({
      name: c.name as string,
      width: c.width as number,
      height: c.height as number,
      color: u8(c.color),
      depth: u8(c.depth),
      segmentation: u8(c.segmentation),
    }));
  return out;
}

/** A frame message, or an error the server answered a command with. */
export function decodeMessage(data: ArrayBuffer | Uint8Array): FrameMessage | { error: string } {
  const view = data instanceof Uint8Array ? data : new Uint8Array(data);
  const raw = decode(view) as Raw;
  if (typeof raw.error === "string") return { error: raw.error };
  return {
    frame: raw.frame as number,
    time: raw.time as number,
    key: raw.key as boolean,
    egoSensor: (raw.egoSensor as EgoSensor | null) ?? null,
    worldSensor: world(raw.worldSensor as Raw),
    laneSensor: raw.laneSensor ? decodeLanes(raw.laneSensor as Raw) : null,
    laneVersion: raw.laneVersion as number,
    sensors: sensors(raw.sensors as Raw | undefined),
    status: raw.status as Status,
    info: raw.info as Info | undefined,
    bytes: view.byteLength,
  };
}

export type Command =
  | { cmd: "play" }
  | { cmd: "pause" }
  | { cmd: "step"; count?: number }
  | { cmd: "speed"; value: number | "max" }
  | { cmd: "seek"; frame: number }
  | { cmd: "sensor"; name: string; active: boolean };

export function encodeCommand(c: Command): Uint8Array {
  return encode(c);
}
