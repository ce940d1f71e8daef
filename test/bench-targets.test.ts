import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { figure } from '../bench/runner/measure.ts';
import { evaluateTargets } from '../bench/runner/result.ts';

// The cached-hit bound as the bench judges it: server CPU a request (the process's CPU
// share over its req/s) of the service over the Koa floor's, from hand-made figures.

const stats = (rps: number, serverCpu?: number) => ({
  count: 400,
  p50: 1,
  p99: 5,
  rps,
  bytes: 11_551,
  ...(serverCpu !== undefined && { serverCpu }),
});

/** A cached br hit at `connections`: the service at `rps` and a full core, the Koa floor at `koaRps` and a full core (`measured`), or its CPU unmeasured. */
function cachedBr(rps: number, koaRps: number, measured = true, connections = 16) {
  const koa = stats(koaRps, measured ? 1 : undefined);
  return figure(
    'cached-br',
    'cached hit, JSON br',
    connections,
    stats(rps, 1),
    [stats(rps, 1), stats(rps, 1)],
    { koa },
    { koa: [koa, koa] },
  );
}

const targets = (...figures: ReturnType<typeof cachedBr>[]) => evaluateTargets(figures, { skipped: 'no sweep' }, undefined);
const target = (f: ReturnType<typeof cachedBr>) => targets(f).find((t) => t.id === 'cached-br-cpu-vs-koa')!;

test("a cached hit costing 2.5x the Koa floor's CPU misses; 1.5x meets; an unmeasured floor is skipped", () => {
  // 10,000 req/s on a core is 100 µs a request; the floor's 25,000, 40 µs.
  assert.equal([target(cachedBr(10_000, 25_000)).value, target(cachedBr(10_000, 25_000)).met], [2.5, false]);
  assert.is(target(cachedBr(20_000, 30_000)).met, true);
  assert.equal(target(cachedBr(20_000, 25_000, false)), {
    id: 'cached-br-cpu-vs-koa',
    text: target(cachedBr(1, 1)).text,
    value: null,
    limit: 2,
    met: null,
    skipped: 'not measured',
  });
});

test('the 1-client figure is judged on its own: 1.1x there meets while 16 connections read 2.5x', () => {
  const judged = targets(cachedBr(10_000, 25_000), cachedBr(10_000, 11_000, true, 1));
  const byId = (id: string) => judged.find((t) => t.id === id)!;
  assert.equal([byId('cached-br-cpu-vs-koa').met, byId('cached-br-cpu-vs-koa@1').met], [false, true]);
  assert.ok(Math.abs(byId('cached-br-cpu-vs-koa@1').value! - 1.1) < 1e-9);
  assert.match(byId('cached-br-cpu-vs-koa@1').text, /1 client/);
  // Identity was not measured in this run: skipped, not met.
  assert.is(byId('cached-json-cpu-vs-koa@1').met, null);
});

test.run();
