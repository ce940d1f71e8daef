import { createHook } from 'node:async_hooks';

/** One of node's own TickObjects, held for the life of the process (see keepTickObjectMaps). */
let held: object | undefined;

/**
 * Keeps the hidden classes (maps) of node's `process.nextTick` queue entries alive.
 *
 * Each `process.nextTick` builds a TickObject literal, and V8 caches the maps that
 * literal's properties lead to. When no TickObject is alive through a few full GCs,
 * V8 drops those maps, and the next TickObject gets new ones. After a handful of such
 * rounds the literal's inline caches go megamorphic for good, and every later tick
 * defines its four properties in the runtime. Loading a release is exactly such a
 * stretch (full GCs, no ticks), and every request's stream lifecycle takes ~7 ticks:
 * about 3–4 µs a cached hit on this machine (docs/performance.md, "Cached hits below
 * Koa"). Holding one real TickObject keeps its maps, and so those caches, as they are.
 *
 * The only public handle on a TickObject is an async hook's `init`, enabled here for
 * one tick and disabled again.
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
