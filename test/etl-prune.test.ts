import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FIXTURE_RELEASE, fixtureDataDir, tempDir } from './helpers/service.ts';

// `etl prune --keep N`: old releases leave the disk; the current one and any newer
// one (withdrawn by a rollback) never do, and a crash mid-removal leaves nothing
// half-removed that the next etl command does not clear.

const ROOT = path.resolve(import.meta.dirname, '..');
const run = promisify(execFile);
const etl = (...args: string[]) => run(process.execPath, ['--import', 'tsx', 'etl/cli.ts', ...args], { cwd: ROOT }).then(
  ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
  (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
);

/** DATA_DIR with the fixture copied as each of `ids`, the pointer naming `current`. */
async function dataDirWith(ids: string[], current: string): Promise<string> {
  const dataDir = await tempDir('dqs-prune-');
  const fixture = path.join(await fixtureDataDir(), FIXTURE_RELEASE);
  for (const id of ids) {
    await fs.cp(fixture, path.join(dataDir, id), { recursive: true });
    const manifest = path.join(dataDir, id, 'manifest.json');
    await fs.writeFile(manifest, JSON.stringify({ ...JSON.parse(await fs.readFile(manifest, 'utf8')), release: id }));
  }
  await fs.writeFile(path.join(dataDir, 'CURRENT'), `${current}\n`);
  return dataDir;
}

const entries = async (dir: string) => (await fs.readdir(dir)).sort();

const prune = suite('etl prune');

prune('keeps the N newest up to the current one, and every newer one; --dry-run removes nothing', async () => {
  const dataDir = await dataDirWith(['2026-07', '2026-08', '2026-09', '2026-10', '2026-11'], '2026-10');
  try {
    const dry = await etl('prune', '--keep', '2', '--dry-run', '--data-dir', dataDir);
    assert.is(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /^would remove 2026-07\nwould remove 2026-08\nkept 2026-09, 2026-10 \(current\)\nkept 2026-11: newer than the current release/);
    assert.equal(await entries(dataDir), ['2026-07', '2026-08', '2026-09', '2026-10', '2026-11', 'CURRENT']);

    const real = await etl('prune', '--keep', '2', '--data-dir', dataDir);
    assert.is(real.code, 0, real.stderr);
    assert.match(real.stdout, /^removed 2026-07\nremoved 2026-08\n/);
    assert.equal(await entries(dataDir), ['2026-09', '2026-10', '2026-11', 'CURRENT']);

    const again = await etl('prune', '--keep', '1', '--data-dir', dataDir);
    assert.equal(await entries(dataDir), ['2026-10', '2026-11', 'CURRENT'], again.stdout);
    const nothing = await etl('prune', '--keep', '1', '--data-dir', dataDir);
    assert.match(nothing.stdout, /^nothing to prune: 1 release up to the current one, keeping 1/);
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

prune('--keep below 1 or not a number is refused and changes nothing', async () => {
  const dataDir = await dataDirWith(['2026-10', '2026-11'], '2026-11');
  try {
    for (const keep of ['0', 'x', '-1']) {
      const res = await etl('prune', '--keep', keep, '--data-dir', dataDir);
      assert.ok(res.code !== 0, keep);
      assert.match(res.stderr, /--keep/, keep);
    }
    assert.equal(await entries(dataDir), ['2026-10', '2026-11', 'CURRENT']);
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

prune('a removal a crash interrupted is cleared by the next etl command', async () => {
  const dataDir = await dataDirWith(['2026-11'], '2026-11');
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  try {
    // What a prune killed between its rename and its rm leaves: no release, a folder of a dead PID.
    await fs.cp(path.join(dataDir, '2026-11'), path.join(dataDir, `.2026-07.prune-${child.pid}`), { recursive: true });
    const list = await etl('list', '--data-dir', dataDir);
    assert.is(list.code, 0, list.stderr);
    assert.not.match(list.stdout, /2026-07/);
    assert.equal(await entries(dataDir), ['2026-11', 'CURRENT']);
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

prune.run();
