import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compareResults, formatComparison } from '../bench/runner/compare.ts';
import { figure } from '../bench/runner/measure.ts';
import { machineKind, type Result, SCHEMA } from '../bench/runner/result.ts';

// `npm run bench -- --compare A.json B.json`, and `--compare RESULT.json` against a
// baseline, on small hand-made results: no load is run; the figures are what a run
// would have written. The baselines are written here too, never the committed ones.

const ROOT = path.resolve(import.meta.dirname, '..');
const stats = (p50: number, rps: number) => ({ count: 400, p50, p99: p50 * 5, rps, bytes: 251_739 });

/**
 * A figure whose halves differ by `noise` (relative spread) in both p50 and req/s,
 * beside a bare ceiling timed in the same rounds with steady halves; `machine`
 * scales the ceiling (a busier machine: < 1 for req/s).
 */
function fig(id: string, connections: number, p50: number, rps: number, noise = 0.02, machine = 1) {
  const half = (k: number) => stats(p50 * k, rps * k);
  const k = (2 + noise) / (2 - noise); // two halves x and kx have spread `noise`
  const bare = stats(0.1 / machine, 20_000 * machine);
  return figure(id, `${id} title`, connections, stats(p50, rps), [half(1), half(k)], { bare }, { bare: [bare, bare] });
}

function result(figures: ReturnType<typeof fig>[], extra: Partial<Result> = {}): Result {
  return {
    schema: SCHEMA,
    mode: 'quick',
    date: '2026-11-22T12:00:00.000Z',
    commit: 'abc',
    dirty: false,
    machine: { cpus: 2, model: 'test cpu', memoryMB: 24_000, os: 'Linux', node: 'v20', loadAverage: [0, 0, 0] },
    settings: {
      timing: { rounds: 2, seconds: 1, warmup: 30 },
      mixed: { one: 120, sixteen: 400, seed: 1 },
      release: '2026-11',
      ggrRows: 938_742,
      noiseFloor: 0.05,
    },
    figures,
    selfCheck: null,
    peer: { clickhouse: { skipped: 'absent' } },
    sweep: { skipped: 'quick' },
    targets: [],
    durationSeconds: 70,
    ...extra,
  };
}

const verdicts = (a: Result, b: Result) => Object.fromEntries(compareResults(a, b).changes.map((c) => [c.id, c.verdict]));

test('a drop in req/s beyond the noise floor is a regression; one within it is noise', () => {
  const a = result([fig('uncached-page', 16, 13, 1000), fig('cached-json', 16, 10, 1300)]);
  const b = result([fig('uncached-page', 16, 13, 700), fig('cached-json', 16, 10, 1260)]);
  assert.equal(verdicts(a, b), { 'uncached-page@16': 'regression', 'cached-json@16': 'noise' });
});

test('a figure is judged by its ratio to the ceiling timed beside it: a machine slower for both is noise', () => {
  const a = result([fig('cached-br', 16, 1, 10_000)]);
  // Service and bare both 30% slower: the ratio holds.
  const busy = result([fig('cached-br', 16, 1, 7_000, 0.02, 0.7)]);
  assert.equal(verdicts(a, busy), { 'cached-br@16': 'noise' });
  // The service 30% slower beside the same bare: the ratio falls.
  const worse = result([fig('cached-br', 16, 1, 7_000)]);
  assert.equal(verdicts(a, worse), { 'cached-br@16': 'regression' });
  const [change] = compareResults(a, worse).changes;
  assert.is(change!.ceiling, 'bare');
  assert.ok(Math.abs(change!.a - 0.5) < 0.01, `ratio ${change!.a}`);
});

test('one client is judged by p50: slower is a regression, faster an improvement', () => {
  const a = result([fig('uncached-page', 1, 2.0, 400), fig('late-page', 1, 2.0, 400)]);
  const b = result([fig('uncached-page', 1, 2.5, 400), fig('late-page', 1, 1.5, 400)]);
  assert.equal(verdicts(a, b), { 'uncached-page@1': 'regression', 'late-page@1': 'improvement' });
});

test("a figure's own noise widens its threshold beyond the floor", () => {
  const a = result([fig('mixed', 16, 20, 1000, 0.3)]);
  const b = result([fig('mixed', 16, 20, 800)]);
  const [change] = compareResults(a, b).changes;
  assert.ok(Math.abs(change!.threshold - 0.3) < 1e-9, `threshold ${change!.threshold}`);
  assert.is(change!.verdict, 'noise');
});

test("the scale sweep's page is compared too; figures in one run only are listed", () => {
  const entry = (p50: number) => ({
    scale: 16,
    dataDir: 'x16',
    rows: 15e6,
    loadSeconds: 60,
    loadPeakMB: 1200,
    steadyRssMB: 900,
    page: stats(p50, 300),
    noise: 0.02,
  });
  const a = result([fig('catalog', 1, 0.2, 4000)], { sweep: { entries: [entry(3)] } });
  const b = result([], { sweep: { entries: [entry(4)] } });
  const comparison = compareResults(a, b);
  assert.equal(Object.fromEntries(comparison.changes.map((c) => [c.id, c.verdict])), { 'sweep-x16@1': 'regression' });
  assert.equal(comparison.onlyInOne, ['catalog@1']);
});

test('npm run bench -- --compare prints the regression and exits 1; equal runs exit 0', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dqs-compare-'));
  try {
    const write = (name: string, r: Result) => {
      fs.writeFileSync(path.join(dir, name), JSON.stringify(r));
      return path.join(dir, name);
    };
    const a = write('a.json', result([fig('uncached-page', 16, 13, 1000), fig('catalog', 1, 0.2, 4000)]));
    const b = write('b.json', result([fig('uncached-page', 16, 13, 600), fig('catalog', 1, 0.2, 4000)]));
    const run = (x: string, y: string) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'bench/runner/run.ts', '--compare', x, y], { cwd: ROOT, encoding: 'utf8' });
    const worse = run(a, b);
    assert.is(worse.status, 1, worse.stderr);
    const row = worse.stdout.split('\n').find((l) => l.includes('[uncached-page@16]'));
    assert.ok(row?.includes('-40.0%') && row.includes('REGRESSION'), worse.stdout);
    assert.ok(worse.stdout.includes('1 regression beyond noise out of 2 figures'), worse.stdout);
    const same = run(a, a);
    assert.is(same.status, 0, same.stdout + same.stderr);
    assert.not.ok(same.stdout.includes('REGRESSION'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a machine kind is the CPU count and model as a file name', () => {
  assert.is(machineKind({ cpus: 2, model: 'Intel(R) Xeon(R) Processor @ 2.50GHz' }), '2x-intel-xeon-processor-2-50ghz');
  assert.is(machineKind({ cpus: 2, model: 'Intel(R) Xeon(R) Processor' }), '2x-intel-xeon-processor');
  assert.is(machineKind({ cpus: 64, model: 'AMD EPYC 7B13 64-Core Processor' }), '64x-amd-epyc-7b13-64-core-processor');
  assert.is(machineKind({ cpus: 1, model: '' }), '1x-unknown');
});

test('--compare with one result compares it against the baseline of its machine kind, and says when there is none', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dqs-compare-'));
  try {
    const baselines = path.join(dir, 'baselines');
    fs.mkdirSync(baselines);
    const kind = machineKind(result([]).machine);
    assert.is(kind, '2x-test-cpu');
    fs.writeFileSync(
      path.join(baselines, `${kind}.json`),
      JSON.stringify(result([fig('uncached-page', 16, 13, 1000)], { commit: 'base' })),
    );
    const write = (name: string, r: Result) => {
      fs.writeFileSync(path.join(dir, name), JSON.stringify(r));
      return path.join(dir, name);
    };
    const run = (file: string) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'bench/runner/run.ts', '--compare', file, '--baselines-dir', baselines], {
        cwd: ROOT,
        encoding: 'utf8',
      });

    const worse = run(write('worse.json', result([fig('uncached-page', 16, 13, 600)])));
    assert.is(worse.status, 1, worse.stdout + worse.stderr);
    assert.ok(
      worse.stdout.includes(`A is the baseline of ${kind}`) && worse.stdout.includes('A: 2026-11-22T12:00:00.000Z base'),
      worse.stdout,
    );
    assert.ok(worse.stdout.includes('1 regression beyond noise out of 1 figures'), worse.stdout);
    const same = run(write('same.json', result([fig('uncached-page', 16, 13, 1000)])));
    assert.is(same.status, 0, same.stdout + same.stderr);

    const elsewhere = run(
      write('elsewhere.json', result([fig('uncached-page', 16, 13, 1000)], { machine: { ...result([]).machine, cpus: 4 } })),
    );
    assert.is(elsewhere.status, 2, elsewhere.stdout + elsewhere.stderr);
    assert.ok(
      elsewhere.stderr.includes('no baseline for this machine kind (4x-test-cpu)') && elsewhere.stderr.includes(`baselines: ${kind}.json`),
      elsewhere.stderr,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('formatComparison warns when the runs differ in mode or machine', () => {
  const a = result([fig('catalog', 1, 0.2, 4000)]);
  const b = result([fig('catalog', 1, 0.2, 4000)], { mode: 'full' });
  assert.ok(formatComparison(a, b, compareResults(a, b)).includes('warning: modes differ'));
});

test.run();
