// The world as the page knows it: the feed's deltas applied to a map of objects by id.
import type { LaneSensor, Script, WorldDelta } from "./protocol";

export interface WorldObject {
  id: number;
  kind: number;
  model: number;
  size: [number, number, number]; // length, width, height (m)
  pose: [number, number, number, number]; // x, y, z (m), heading (rad): world frame - origin
  speed: number; // m/s
  collided: boolean;
}

/** The `worldSensor` prop: every object but the ego, by id, at one frame. */
export interface WorldSensor {
  frame: number;
  time: number;
  objects: Map<number, WorldObject>;
  scripts: Script[];
}

/** Applies world deltas in order; a key frame starts over. */
export class WorldStore {
  objects = new Map<number, WorldObject>();
  scripts: Script[] = [];

  apply(delta: WorldDelta, key: boolean): void {
    if (key) {
      this.objects = new Map();
      this.scripts = delta.scripts ?? [];
    }
    for (const id of delta.remove) this.objects.delete(id);
    const { add } = delta;
    for (let i = 0; i < add.id.length; i++) {
      this.objects.set(add.id[i], {
        id: add.id[i],
        kind: add.kind[i],
        model: add.model[i],
        size: [add.size[3 * i], add.size[3 * i + 1], add.size[3 * i + 2]],
        pose: [0, 0, 0, 0],
        speed: 0,
        collided: false,
      });
    }
    const { id, xyzhv } = delta.pose;
    for (let i = 0; i < id.length; i++) {
      const o = this.objects.get(id[i]);
      if (!o) continue;
      const k = 5 * i;
      o.pose = [xyzhv[k], xyzhv[k + 1], xyzhv[k + 2], xyzhv[k + 3]];
      o.speed = xyzhv[k + 4];
    }
    for (const o of this.objects.values()) o.collided = false;
    for (const c of delta.collided) {
      const o = this.objects.get(c);
      if (o) o.collided = true;
    }
  }

  sensor(frame: number, time: number): WorldSensor {
    return { frame, time, objects: this.objects, scripts: this.scripts };
  }
}

/** Keeps the latest lane content; a delta without lanes keeps the previous ones. */
export function nextLanes(previous: LaneSensor | null, incoming: LaneSensor | null): LaneSensor | null {
  return incoming ?? previous;
}
