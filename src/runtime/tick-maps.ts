import { createHook } from 'node:async_hooks';

/** One of node's own TickObjects, held for the life of the process (see keepTickObjectMaps). */
let held: object | undefined;

/**
 * Keeps the hidden classes (maps) of node's `process.nextTick` queue entries alive.
 *
 * Each `process.nextTick` builds a TickObject literal, and V8 caches the maps its
 * properties lead to. A full GC while no TickObject is alive drops those maps; the
 * next tick makes new ones. After four such GCs the literal's inline caches are
 * megamorphic for good, and every later tick defines its properties in the runtime:
 * 50 → 230 ns a tick on node 20 (test/tick-maps.test.ts shows the caches' state).
 * Loading a release is such a stretch, and so is any idle spell, and answering one
 * request takes about eight ticks in node's own stream lifecycle.
 *
 * This leans on how V8 collects maps, which issue 27 allows only for ≥ 10% on a
 * bench figure measured with it on and off in the same run: `npm run bench`'s
 * `tick-maps` figure (a cached br hit against a server started with
 * KEEP_TICK_MAPS=false). Measured: 47.3 against 54.0 µs of server CPU a br hit
 * (−12%), median of five alternated start pairs. When a node release no longer drops
 * the maps, test/tick-maps.test.ts fails and this file can go.
 *
 * The only public handle on a TickObject is an async hook's `init`, enabled here for
 * one tick and disabled again: no hook runs while the service serves.
 */
export function keepTickObjectMaps(): Promise<void> {
  if (held) return Promise.resolve();
  return new Promise((resolve) => {
    const hook = createHook({
      init(_asyncId, type, _triggerAsyncId, resource) {
        if (type === 'TickObject' && held === undefined) held = resource;
      },
    }).enable();
    process.nextTick(() => {
      hook.disable();
      resolve();
    });
  });
}
