import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type LoadOptions, loadDrop } from '../etl/load.ts';
import { quoteLiteral } from '../src/duckdb/sql-text.ts';
import { readPointer } from '../src/releases/on-disk.ts';
import { FIXTURE_RELEASE, fixtureDataDir, startTestService, tempDir } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';

// Publishing a month: what `etl load` accepts, every server can serve; and a load
// killed at any point leaves DATA_DIR serving a whole release, with nothing left over
// for good.

const ROOT = path.resolve(import.meta.dirname, '..');
const run = promisify(execFile);
const etl = (...args: string[]) => run('node', ['--import', 'tsx', 'etl/cli.ts', ...args], { cwd: ROOT });
const STRACE = ['/usr/bin/strace', '/bin/strace'].find((file) => existsSync(file));

const created: string[] = [];
async function scratch(prefix: string): Promise<string> {
  const dir = await tempDir(prefix);
  created.push(dir);
  return dir;
}

const options = (drop: string, dataDir: string, release: string): LoadOptions => ({
  drop,
  dataDir,
  release,
  force: false,
  minYear: 1990,
  maxYear: 2100,
  maxRowChange: 0.25,
});

/** The fixture release's files as an analyst's drop, fx's four metrics replaced by `value` (DuckDB writes it). */
async function dropWithFx(value: string): Promise<string> {
  const source = path.join(await fixtureDataDir(), FIXTURE_RELEASE);
  const drop = await scratch('dqs-drop-');
  for (const file of await fs.readdir(source))
    if (file.endsWith('.parquet')) await fs.copyFile(path.join(source, file), path.join(drop, file));
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const fx = path.join(source, 'fx.parquet');
  const metrics = ['fx_constant_usd', 'fx_current_eur', 'fx_constant_eur', 'fx_current_usd'];
  await connection.run(`COPY (SELECT * REPLACE (${metrics.map((m) => `${value}::DOUBLE AS ${m}`).join(', ')}) FROM read_parquet(${quoteLiteral(fx)}))
    TO ${quoteLiteral(path.join(drop, 'fx.parquet'))} (FORMAT parquet)`);
  connection.closeSync();
  instance.closeSync();
  return drop;
}

const publish = suite('etl load: what it publishes, a server serves');
publish.after(async () => {
  await Promise.all(created.splice(0).map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

publish('fx values of 25 characters (-1.2345678901234567e-6): published, loaded by a server, served whole as JSON and CSV', async () => {
  const dataDir = await scratch('dqs-data-');
  await loadDrop(options(await dropWithFx('-1.2345678901234567e-6'), dataDir, '2026-04'));
  assert.is(await readPointer(dataDir), '2026-04');
  const service = await startTestService({ dataDir });
  try {
    const json = await service.get('/v1/financials?metric=fx&limit=1000');
    assert.is(json.status, 200);
    assert.is(json.json.data.length, 1000);
    for (const row of json.json.data)
      assert.equal(
        Object.values(row.values),
        [-1.2345678901234567e-6, -1.2345678901234567e-6, -1.2345678901234567e-6, -1.2345678901234567e-6],
      );
    const csv = await service.get('/v1/financials?metric=fx&limit=1000', { headers: { accept: 'text/csv' } });
    assert.is(csv.status, 200);
    const lines = csv.text.trimEnd().split('\r\n');
    assert.is(lines.length, 1001);
    for (const line of lines.slice(1))
      assert.ok(
        line.endsWith(',-0.0000012345678901234567,-0.0000012345678901234567,-0.0000012345678901234567,-0.0000012345678901234567'),
        line,
      );
  } finally {
    await service.stop();
  }
});

publish(
  "generated data stays marked synthetic: etl generate's drop, loaded, is synthetic in /v1/releases, /v1/catalog and etl list; a publisher's drop is not",
  async () => {
    const dataDir = await scratch('dqs-data-');
    const generated = await scratch('dqs-generated-');
    await etl('generate', '--out', path.join(generated, '2026-05'), '--seed', '3', '--scale', '0.02');
    await loadDrop(options(path.join(generated, '2026-05'), dataDir, '2026-05'));
    // A publisher's drop: the same files, without etl generate's manifest.
    const publisher = await scratch('dqs-publisher-');
    for (const file of await fs.readdir(path.join(generated, '2026-05')))
      if (file.endsWith('.parquet')) await fs.copyFile(path.join(generated, '2026-05', file), path.join(publisher, file));
    await loadDrop(options(publisher, dataDir, '2026-06'));
    const listed = (await etl('list', '--data-dir', dataDir)).stdout;
    assert.match(listed, /2026-05.*synthetic/);
    assert.not.match(listed, /2026-06.*synthetic/);
    const service = await startTestService({ dataDir });
    try {
      const releases = (await service.get('/v1/releases')).json.releases.map((r: { id: string; synthetic: boolean }) => [
        r.id,
        r.synthetic,
      ]);
      assert.equal(releases, [
        ['2026-06', false],
        ['2026-05', true],
      ]);
      assert.is((await service.get('/v1/catalog')).json.release.synthetic, false);
      assert.is((await service.get('/v1/catalog?release=2026-05')).json.release.synthetic, true);
    } finally {
      await service.stop();
    }
  },
);

publish('the manifest counts rows added, removed and changed against the release it replaced, once, at publishing', async () => {
  const dataDir = await scratch('dqs-data-');
  const fixture = path.join(await fixtureDataDir(), FIXTURE_RELEASE);
  const first = await loadDrop(options(fixture, dataDir, '2026-01'));
  assert.is(first.changes, undefined, 'nothing to compare the first release with');
  const second = await loadDrop(options(await dropWithFx('0.5'), dataDir, '2026-02'));
  const fxRows = first.datasets.fx!.rows;
  assert.equal(second.changes, {
    against: '2026-01',
    datasets: {
      ggr: { added: 0, removed: 0, changed: 0 },
      turnover: { added: 0, removed: 0, changed: 0 },
      fx: { added: 0, removed: 0, changed: fxRows },
      country: { added: 0, removed: 0, changed: 0 },
      country_reference: { added: 0, removed: 0, changed: 0 },
    },
  });
  const diff = await etl('diff', '2026-01', '2026-02', '--json', '--data-dir', dataDir);
  assert.is(JSON.parse(diff.stdout).datasets.fx.changed, fxRows, 'the same count etl diff gives');
});

publish.run();

const crashes = suite('etl load: crash windows');
crashes.after(async () => {
  await Promise.all(created.splice(0).map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

/** A PID that no process has now: one that ran and exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  return child.pid!;
}

crashes("the next etl command removes what killed loads left: their release folders and pointer files, not a live one's", async () => {
  const dataDir = await scratch('dqs-data-');
  await loadDrop(options(path.join(await fixtureDataDir(), FIXTURE_RELEASE), dataDir, '2026-01'));
  const dead = await deadPid();
  await fs.mkdir(path.join(dataDir, `.2026-02.tmp-${dead}`));
  await fs.writeFile(path.join(dataDir, `.2026-02.tmp-${dead}`, 'ggr.parquet'), 'half');
  await fs.writeFile(path.join(dataDir, `.CURRENT.tmp-${dead}`), '2026-0');
  const live = `.2026-03.tmp-${process.pid}`;
  await fs.mkdir(path.join(dataDir, live));
  const { stdout, stderr } = await etl('list', '--data-dir', dataDir);
  assert.match(stdout, /\*\s+2026-01/);
  assert.match(stderr, new RegExp(`removed .*\\.2026-02\\.tmp-${dead}, left by an etl command that no longer runs`));
  assert.equal((await fs.readdir(dataDir)).sort(), [live, '2026-01', 'CURRENT', 'publications.jsonl'].sort());
});

crashes('a release published but never switched to (a crash before CURRENT moved): the refusal names etl rollback', async () => {
  const dataDir = await scratch('dqs-data-');
  const drop = path.join(await fixtureDataDir(), FIXTURE_RELEASE);
  await loadDrop(options(drop, dataDir, '2026-01'));
  // What a crash between the rename and the pointer leaves: the folder, and the pointer on the old release.
  await fs.cp(path.join(dataDir, '2026-01'), path.join(dataDir, '2026-02'), { recursive: true });
  const refused = await loadDrop(options(drop, dataDir, '2026-02')).then(
    () => undefined,
    (err: Error) => err,
  );
  assert.match(refused!.message, /release 2026-02 is already published/);
  assert.match(refused!.message, /serve it with `npm run etl -- rollback 2026-02`/);
});

if (!STRACE) {
  skippedSuite(
    'etl load: durable publishing',
    'strace is not installed (Debian: apt-get install -y strace); the fsync order is not checked',
  );
} else {
  const durable = suite('etl load: durable publishing');
  durable.after(async () => {
    await Promise.all(created.splice(0).map((dir) => fs.rm(dir, { recursive: true, force: true })));
  });
  durable('files and folder are synced before the rename, the data folder after it, the pointer before and after its rename', async () => {
    const dataDir = await scratch('dqs-data-');
    const trace = path.join(await scratch('dqs-trace-'), 'trace');
    const drop = path.join(await fixtureDataDir(), FIXTURE_RELEASE);
    await run(
      STRACE,
      [
        '-f',
        '-y',
        '-qq',
        '-e',
        'trace=fsync,fdatasync,rename,renameat,renameat2',
        '-o',
        trace,
        'node',
        '--import',
        'tsx',
        'etl/cli.ts',
        'load',
        drop,
        '--release',
        '2026-05',
        '--data-dir',
        dataDir,
      ],
      { cwd: ROOT },
    );
    const calls = (await fs.readFile(trace, 'utf8'))
      .split('\n')
      .filter((l) => /fsync|fdatasync|rename/.test(l) && !/unfinished|resumed/.test(l));
    const at = (pattern: RegExp) => calls.findIndex((l) => pattern.test(l));
    const work = /\.2026-05\.tmp-\d+/;
    const renameRelease = at(new RegExp(`rename.*${work.source}", ".*/2026-05"`));
    const renamePointer = at(/rename.*\.CURRENT\.tmp-\d+", ".*\/CURRENT"/);
    assert.ok(renameRelease >= 0 && renamePointer > renameRelease, `renames in order:\n${calls.join('\n')}`);
    for (const file of ['ggr.parquet', 'turnover.parquet', 'fx.parquet', 'country.parquet', 'country_reference.parquet', 'manifest.json']) {
      const synced = at(new RegExp(`fsync\\(\\d+<[^>]*${work.source}/${file.replace('.', '\\.')}>`));
      assert.ok(synced >= 0 && synced < renameRelease, `${file} synced before the release's rename`);
    }
    const folderSynced = at(new RegExp(`fsync\\(\\d+<[^>]*${work.source}>\\)`));
    assert.ok(folderSynced >= 0 && folderSynced < renameRelease, 'the release folder synced before its rename');
    const dataDirSync = (after: number) => calls.findIndex((l, i) => i > after && new RegExp(`fsync\\(\\d+<${dataDir}>\\)`).test(l));
    assert.ok(
      dataDirSync(renameRelease) > renameRelease && dataDirSync(renameRelease) < renamePointer,
      "DATA_DIR synced after the release's rename, before the pointer moved",
    );
    const pointerSynced = at(/fsync\(\d+<[^>]*\.CURRENT\.tmp-\d+>\)/);
    assert.ok(pointerSynced > renameRelease && pointerSynced < renamePointer, 'the new pointer synced before its rename');
    assert.ok(dataDirSync(renamePointer) > renamePointer, "DATA_DIR synced after the pointer's rename");
    assert.is(await readPointer(dataDir), '2026-05');
  });
  durable.run();
}

crashes.run();
