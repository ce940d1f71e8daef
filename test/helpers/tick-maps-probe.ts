import { keepTickObjectMaps } from '../../src/runtime/tick-maps.ts';

// Run by test/tick-maps.test.ts in a child node (--allow-natives-syntax --expose-gc):
// full GCs while no TickObject is alive, rounds of ticks between them, then the state
// of the inline caches of nextTick's TickObject literal, as V8 prints it.

if (process.argv.includes('--keep')) await keepTickObjectMaps();
const gc = (globalThis as { gc?: () => void }).gc!;
for (let round = 0; round < 8; round++) {
  for (let i = 0; i < 4; i++) gc();
  for (let i = 0; i < 5; i++) await new Promise((resolve) => process.nextTick(resolve));
}
// V8's natives syntax is not TypeScript: compiled at run time.
new Function('f', '%DebugPrint(f)')(process.nextTick);
