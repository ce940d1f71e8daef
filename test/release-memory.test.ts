import fs from 'node:fs/promises';
import path from 'node:path';
import { request } from 'undici';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { latestRelease, writePointer } from '../src/releases/on-disk.ts';
import { releaseCopies } from '../tools/release-copies.ts';
import { type ServiceProcess, startServer } from '../tools/service-process.ts';
import { fixtureDataDir, tempDir } from './helpers/service.ts';

// Memory a release held is returned once it is unloaded after its grace
// period. Its columns are typed arrays, freed only by a garbage collection that an
// idle server would not run; this runs the server as `npm start` does (its compiled
// entry point with package.json's node flags) and reads its own accounting.

const metric = async (server: ServiceProcess, name: string): Promise<number> => {
  const text = await (await request(`${server.adminUrl}/metrics`)).body.text();
  return [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, 'gm'))].reduce((sum, m) => sum + Number(m[1]), 0);
};

async function until<T>(what: string, check: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('a release unloaded after its grace period gives its memory back, on an idle server', async () => {
  const source = (await latestRelease(await fixtureDataDir({ scale: 0.25 })))!;
  const dataDir = await tempDir('dqs-release-memory-');
  const stateDir = await tempDir('dqs-release-memory-state-');
  const ids = ['2026-10', '2026-11'] as const;
  await releaseCopies(source, dataDir, ids);
  await writePointer(dataDir, ids[0]);
  const server = await startServer(
    { DATA_DIR: dataDir, STATE_DIR: stateDir, RELEASE_POLL_MS: '100', RELEASE_GRACE_SECONDS: '1' },
    path.join(stateDir, 'server.log'),
  );
  try {
    const held = await metric(server, 'dqs_release_memory_bytes');
    assert.ok(held > 5e6, `the release holds ${held} bytes: big enough to tell from noise`);
    await writePointer(dataDir, ids[1]);
    await until(
      'the old release unloaded',
      async () => {
        const health = (await (await request(`${server.url}/healthz`)).body.json()) as { release: string; retained: string[] };
        return health.release === ids[1] && health.retained.length === 0 ? true : undefined;
      },
      60_000,
    );
    // Held by no release, still counted by V8: what the unloaded release left behind.
    const leftOver = async () =>
      (await metric(server, 'dqs_nodejs_external_memory_bytes')) - (await metric(server, 'dqs_release_memory_bytes'));
    const left = await until(
      'the unloaded release freed',
      async () => ((await leftOver()) < held / 2 ? await leftOver() : undefined),
      10_000,
    ).catch(async (err: Error) => {
      throw new Error(
        `${err.message}: ${(await leftOver()) / 1e6} MB of JS buffers are held by no release (the old one held ${held / 1e6} MB)`,
      );
    });
    assert.ok(left < held / 2);
  } finally {
    await server.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
    await fs.rm(stateDir, { recursive: true, force: true });
  }
});

test.run();
