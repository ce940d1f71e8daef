// Loaded into a bench server with `node --import` (bench/scenarios/whole-diff.ts): every
// event-loop step longer than 50 ms appends its length in ms to the file named by
// DQS_BENCH_LOOP_STEPS. A timer due every 10 ms is late by about as long as the step
// that held the loop; the server's own code is untouched, so the code before a change
// is measured the same way.
import { appendFileSync } from 'node:fs';

const file = process.env.DQS_BENCH_LOOP_STEPS;
const EVERY_MS = 10;
const OVER_MS = 50;

if (file) {
  let last = performance.now();
  const tick = () => {
    const now = performance.now();
    const step = now - last - EVERY_MS;
    if (step > OVER_MS) appendFileSync(file, `${step.toFixed(0)}\n`);
    last = now;
    setTimeout(tick, EVERY_MS).unref();
  };
  setTimeout(tick, EVERY_MS).unref();
}
