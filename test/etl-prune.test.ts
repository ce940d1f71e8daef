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
const etl = (...args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'etl/cli.ts', ...args], { cwd: ROOT }).then(
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

prune('keeps the N newest up to the current one, never the current one, and every newer one after a rollback', async () => {
  const dataDir = await dataDirWith(['2026-07', '2026-08', '2026-09', '2026-10', '2026-11'], '2026-11');
  try {
    // A real rollback: 2026-11 is withdrawn but stays on disk.
    const back = await etl('rollback', '--data-dir', dataDir);
    assert.is(back.code, 0, back.stderr);
    assert.is((await fs.readFile(path.join(dataDir, 'CURRENT'), 'utf8')).trim(), '2026-10');

    const real = await etl('prune', '--keep', '2', '--data-dir', dataDir);
    assert.is(real.code, 0, real.stderr);
    assert.is(
      real.stdout,
      'removed 2026-07\nremoved 2026-08\nkept 2026-09, 2026-10 (current)\n' +
        'kept 2026-11: newer than the current release (withdrawn by a rollback), so `etl rollback` can return to it\n',
    );
    assert.equal(await entries(dataDir), ['2026-09', '2026-10', '2026-11', 'CURRENT', 'publications.jsonl']);

    // --keep 1 leaves exactly the current one (and the newer one).
    const one = await etl('prune', '--keep', '1', '--data-dir', dataDir);
    assert.is(one.code, 0, one.stderr);
    assert.match(one.stdout, /^removed 2026-09\nkept 2026-10 \(current\)\n/);
    assert.equal(await entries(dataDir), ['2026-10', '2026-11', 'CURRENT', 'publications.jsonl']);

    const nothing = await etl('prune', '--keep', '1', '--data-dir', dataDir);
    assert.is(nothing.code, 0, nothing.stderr);
    assert.match(nothing.stdout, /^nothing to prune: 1 release, keeping 1\nkept 2026-11: newer than the current release/);
    assert.equal(await entries(dataDir), ['2026-10', '2026-11', 'CURRENT', 'publications.jsonl']);

    // What prune kept is still a release rollback can return to.
    const forward = await etl('rollback', '2026-11', '--data-dir', dataDir);
    assert.is(forward.code, 0, forward.stderr);
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

prune('--dry-run prints what would go and changes nothing', async () => {
  const dataDir = await dataDirWith(['2026-08', '2026-09', '2026-10'], '2026-10');
  try {
    const before = await entries(dataDir);
    const dry = await etl('prune', '--keep', '1', '--dry-run', '--data-dir', dataDir);
    assert.is(dry.code, 0, dry.stderr);
    assert.is(dry.stdout, 'would remove 2026-08\nwould remove 2026-09\nkept 2026-10 (current)\n');
    assert.equal(await entries(dataDir), before);
    assert.is((await fs.readFile(path.join(dataDir, 'CURRENT'), 'utf8')).trim(), '2026-10');

    const enough = await etl('prune', '--keep', '5', '--data-dir', dataDir);
    assert.is(enough.stdout, 'nothing to prune: 3 releases, keeping 5\n');
    assert.equal(await entries(dataDir), before);
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

prune('--keep below 1, not a whole number or missing is refused with exit 2 and changes nothing', async () => {
  const dataDir = await dataDirWith(['2026-10', '2026-11'], '2026-11');
  try {
    for (const args of [['--keep', '0'], ['--keep', 'x'], ['--keep', '-1'], ['--keep', '1.5'], []]) {
      const res = await etl('prune', ...args, '--data-dir', dataDir);
      const label = args.join(' ') || '(no --keep)';
      assert.is(res.code, 2, `${label}: ${res.stderr}`);
      assert.match(res.stderr, /--keep must be a whole number of at least 1/, label);
      assert.match(res.stderr, /prune --keep 1/, label);
      assert.is(res.stdout, '', label);
    }
    assert.equal(await entries(dataDir), ['2026-10', '2026-11', 'CURRENT']);
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

prune('a removal a crash interrupted is cleared by the next etl command, unless its process still runs', async () => {
  const dataDir = await dataDirWith(['2026-11'], '2026-11');
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  try {
    // What a prune killed between its rename and its rm leaves: no release, a folder of a dead PID.
    await fs.cp(path.join(dataDir, '2026-11'), path.join(dataDir, `.2026-01.prune-${child.pid}`), { recursive: true });
    // One of a prune still running (this test's PID) is left alone.
    await fs.mkdir(path.join(dataDir, `.2026-02.prune-${process.pid}`));
    const list = await etl('list', '--data-dir', dataDir);
    assert.is(list.code, 0, list.stderr);
    assert.not.match(list.stdout, /2026-01|2026-02/);
    assert.match(list.stderr, new RegExp(`removed .*\\.2026-01\\.prune-${child.pid}, left by an etl command that no longer runs`));
    assert.equal(await entries(dataDir), [`.2026-02.prune-${process.pid}`, '2026-11', 'CURRENT']);
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

prune.run();
