import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CSV_COPY_OPTIONS, historyAlone, historyCeilingSql } from '../bench/ceilings/duckdb-history.ts';
import type { Stats } from '../bench/runner/load.ts';
import { figure } from '../bench/runner/measure.ts';
import { evaluateTargets } from '../bench/runner/result.ts';
import { type HistoryFigures, publishedFiles } from '../bench/scenarios/history.ts';
import { quoteLiteral } from '../src/duckdb/sql-text.ts';
import { findDataset } from '../src/registry.ts';
import { startTestService, type TestService, tempDir } from './helpers/service.ts';
import { R1, R2, R3, type Vintages, vintages } from './helpers/vintages.ts';

// The history scenario's ceiling (bench/ceilings/duckdb-history.ts) gives the rows
// /v1/history gives, on the three releases of test/history.test.ts written by plain
// DuckDB (A added, changed, removed; B unchanged; C added in R3; D back to its R1
// value), and how the bench judges the history and as_of targets.

const GGR = findDataset('ggr', 'financial')!;

/** The ceiling's CSV over `files` (oldest first), as plain DuckDB writes it. */
async function ceilingCsv(files: readonly { id: string; file: string }[]): Promise<string> {
  const dir = await tempDir('dqs-bench-history-');
  const out = path.join(dir, 'ceiling.csv');
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const connection = await instance.connect();
  try {
    await connection.run(`COPY (${historyCeilingSql(files, GGR)}) TO ${quoteLiteral(out)} (${CSV_COPY_OPTIONS})`);
    return await fs.readFile(out, 'utf8');
  } finally {
    connection.closeSync();
    instance.closeSync();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

const published = suite('bench history: the ceiling against /v1/history');
let data: Vintages;
let service: TestService;

published.before(async () => {
  data = await vintages({ rolledBack: false });
  service = await startTestService({ dataDir: data.dataDir });
});
published.after(async () => {
  await service?.stop();
  await data?.remove();
});

published('the ceiling over the drops DuckDB wrote is the whole CSV history /v1/history answers, byte for byte', async () => {
  const ours = await service.get('/v1/history?metric=ggr&output=changes&format=csv');
  assert.is(ours.status, 200);
  const theirs = await ceilingCsv([R1, R2, R3].map((id) => ({ id, file: data.files[id]! })));
  assert.fixture(theirs, ours.text);
  // Not an empty agreement: every kind of change, the removal with no value, a last version open.
  const rows = theirs.trim().split('\r\n').slice(1);
  const changes = rows.map((r) => r.split(',').at(-4));
  for (const change of ['added', 'changed', 'removed']) assert.ok(changes.includes(change), change);
  assert.ok(
    rows.some((r) => r.endsWith(`,removed,${R3},,`)),
    'a removal in R3, valid to null, no value',
  );
  assert.ok(rows.length > 3);
});

published('publishedFiles: the releases in publication order; historyAlone writes the same bytes as the service', async () => {
  const files = await publishedFiles(data.dataDir);
  assert.equal(
    files.map((f) => f.id),
    [R1, R2, R3],
  );
  for (const { id, file } of files) assert.ok(file.startsWith(path.join(data.dataDir, id)), `${id}: its published file`);
  const ours = await service.get('/v1/history?metric=ggr&format=csv');
  const work = await tempDir('dqs-bench-history-alone-');
  try {
    const alone = await historyAlone(historyCeilingSql(files, GGR), work);
    assert.is(alone.rows, ours.text.trim().split('\n').length - 1);
    assert.is(alone.bytes, Buffer.byteLength(ours.text));
    assert.is(alone.sha256, createHash('sha256').update(ours.text).digest('hex'));
    assert.ok(alone.cpuSeconds > 0);
    assert.equal(await fs.readdir(work), [], 'its CSV is removed');
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
});

published.run();

const rolledBack = suite('bench history: a rollback');

rolledBack('publishedFiles leaves a withdrawn release out, as /v1/history does', async () => {
  const back = await vintages({ rolledBack: true });
  try {
    assert.equal(
      (await publishedFiles(back.dataDir)).map((f) => f.id),
      [R1, R2],
    );
  } finally {
    await back.remove();
  }
});

rolledBack.run();

const targets = suite('bench history: targets');

const timed = (cpuSeconds: number) => ({ cpuSeconds, seconds: cpuSeconds });
const history = (whole: number, duckdb: number): HistoryFigures => ({
  rows: 3,
  bytes: 100,
  wholeCsv: timed(whole),
  firstPage: timed(whole / 2),
  duckdb: timed(duckdb),
});
const judged = (h?: HistoryFigures, ...figures: ReturnType<typeof figure>[]) =>
  evaluateTargets(figures, { skipped: 'no sweep' }, undefined, undefined, undefined, undefined, h);
const byId = (list: ReturnType<typeof judged>, id: string) => list.find((t) => t.id === id)!;

targets('the history: 3.2x DuckDB alone misses, 1.9x meets, unmeasured is skipped', () => {
  const missed = byId(judged(history(43.2, 13.5)), 'history-cpu-vs-duckdb');
  assert.equal([missed.met, missed.limit], [false, 2]);
  assert.ok(Math.abs(missed.value! - 3.2) < 1e-9);
  assert.is(byId(judged(history(19, 10)), 'history-cpu-vs-duckdb').met, true);
  assert.is(byId(judged(), 'history-cpu-vs-duckdb').met, null);
});

/** as_of= at `rps` on a full core beside release= at `releaseRps`, with `noise` in the service's rounds. */
function asOf(id: string, rps: number, releaseRps: number, noise: number) {
  const stats = (r: number) => ({ count: 400, p50: 1, p99: 5, rps: r, bytes: 1000, serverCpu: 1 });
  const spread = (r: number): [Stats, Stats] => [stats(r * (1 - noise / 2)), stats(r * (1 + noise / 2))];
  return figure(id, id, 16, stats(rps), spread(rps), { release: stats(releaseRps) }, { release: [stats(releaseRps), stats(releaseRps)] });
}

targets('as_of: parity with release= within the figure noise; beyond it, missed', () => {
  // 3% more CPU a request with as_of, at 8% noise: met; 20% more at 8% noise: missed.
  const list = judged(undefined, asOf('as-of-page', 1000, 1030, 0.08), asOf('as-of-aggregate', 1000, 1200, 0.08));
  const page = byId(list, 'as-of-page-cpu-vs-release');
  const aggregate = byId(list, 'as-of-aggregate-cpu-vs-release');
  assert.equal([page.met, aggregate.met], [true, false]);
  assert.ok(Math.abs(page.value! - 1.03) < 1e-9);
  assert.ok(Math.abs(page.tolerance! - 0.08) < 1e-9);
  assert.is(byId(judged(), 'as-of-page-cpu-vs-release').met, null);
});

targets.run();
