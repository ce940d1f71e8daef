import fs from 'node:fs/promises';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { request } from 'undici';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MANIFEST_FILE } from '../src/releases/manifest.ts';
import { writePointer } from '../src/releases/on-disk.ts';
import { fixtureDataDir, startTestService, tempDir } from './helpers/service.ts';

// A release switch builds the new release's serving structures (column store, rollups,
// renderers) in slices that give the event loop a turn every few milliseconds
// (src/store/slices.ts): while a full-size (1x) release loads beside the served one,
// the process's event loop is never held for long, and a client asking every 10 ms is
// answered throughout, with no connection lost. Before the slices, building one
// dataset's column store held it for ~300 ms at 1x (2 s at 16x).

/** How much longer than idle the event loop may be held while the release loads (the bound for a request's wait). */
const BOUND_MS = 100;

test('switching to a 1x release holds the event loop at most 100 ms longer than idle, and a 10 ms probe is answered throughout', async () => {
  const dataDir = await tempDir('dqs-switch-');
  // One generated 1x release, twice under two ids: the second load costs what the first did.
  const generated = path.join(await fixtureDataDir({ seed: 1, scale: 1, release: '2026-11' }), '2026-11');
  for (const id of ['2026-11', '2026-12']) {
    await fs.cp(generated, path.join(dataDir, id), { recursive: true });
    const file = path.join(dataDir, id, MANIFEST_FILE);
    await fs.writeFile(file, JSON.stringify({ ...JSON.parse(await fs.readFile(file, 'utf8')), release: id }));
  }
  await writePointer(dataDir, '2026-11');
  const service = await startTestService({ dataDir });
  const delay = monitorEventLoopDelay({ resolution: 5 });
  try {
    await service.get('/v1/catalog');
    const answered: number[] = [];
    const failures: string[] = [];
    let switching = true;
    const probe = (async () => {
      while (switching) {
        const sent = performance.now();
        try {
          const res = await request(`${service.url}/v1/catalog`, { headers: { 'x-api-key': service.key } });
          await res.body.dump();
          if (res.statusCode !== 200) failures.push(`status ${res.statusCode}`);
          answered.push(performance.now() - sent);
        } catch (err) {
          failures.push((err as Error).message);
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    // The same probe first with nothing loading: the longest hold idle, on this machine now.
    delay.enable();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    delay.disable();
    const idle = delay.max / 1e6;
    delay.reset();
    delay.enable();
    await writePointer(dataDir, '2026-12');
    await service.running.reload('test');
    delay.disable();
    switching = false;
    await probe;
    const held = delay.max / 1e6;
    assert.is((await service.get('/healthz', { key: null })).json.release, '2026-12', 'the new release is served');
    assert.equal(failures, [], 'every probe answered 200, no connection lost');
    assert.ok(answered.length > 20, `the probe was answered throughout the load (${answered.length} answers)`);
    assert.ok(
      held < idle + BOUND_MS,
      `the event loop was held ${held.toFixed(0)} ms at most while the release loaded, ${idle.toFixed(0)} ms idle (bound: ${BOUND_MS} ms more than idle)`,
    );
  } finally {
    delay.disable();
    await service.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

test.run();
