import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { latestRelease, type ReleaseOnDisk } from '../src/releases/on-disk.ts';
import { startBare, type Captured } from './bare.ts';
import { queryCeilings, type QueryCeiling } from './ceilings.ts';
import { CLICKHOUSE_BINARY, CLICKHOUSE_SKIP_REASON, startClickHouse } from './clickhouse.ts';
import { compareResults, formatComparison } from './compare.ts';
import { figure, rounds, type Figure, type Side } from './measure.ts';
import { mixedWorkload } from './mixed.ts';
import { figureRow, line, progress, summary, sweepRow, TABLE_HEADER } from './report.ts';
import { commit, evaluateTargets, machine, NOISE_FLOOR, resultName, SCHEMA, type Result } from './result.ts';
import { cachedScenarios, capture, limitScenarios, PAGE, PAGE_FILTERS, QUERY_SPECS, uncachedScenarios, withKey, type Scenario } from './scenarios.ts';
import { startServer, type BenchServer } from './server.ts';
import { sweep, type Sweep } from './sweep.ts';

// `npm run bench [-- --quick] [-- --baseline DIR]`: the suite (docs/performance.md).
// The service runs as users run it, `src/main.ts` in its own process; load comes from
// this process over loopback (undici). Every figure sits beside its ceilings from the
// same run: a bare node:http server sending the scenario's exact bytes, DuckDB alone
// on the same query, ClickHouse on the same page where installed.
// `npm run bench -- --compare A.json B.json`: the change per figure between two runs.

const ROOT = path.resolve(import.meta.dirname, '..');
const WORK = path.join(ROOT, 'tmp', 'bench');
const RESULTS = path.join(import.meta.dirname, 'results');
const MIXED_SEED = 1;

const MODES = {
  // Full: about 5-8 minutes of a busy 2-core machine once the releases exist.
  full: { warmup: 200, requests: { one: 2000, sixteen: 8000 }, peer: { one: 300, sixteen: 600 }, mixed: { one: 800, sixteen: 4000 }, duckdb: { one: 1000, sixteen: 4000 }, scales: [1, 4, 16], blocks: { count: 8, size: 100 } },
  // Under 2 minutes: fewer requests, and no scale sweep or 16x page (loading the 16x
  // release alone takes a minute or more, generated or not).
  quick: { warmup: 30, requests: { one: 200, sixteen: 800 }, peer: { one: 100, sixteen: 240 }, mixed: { one: 120, sixteen: 400 }, duckdb: { one: 100, sixteen: 400 }, scales: [], blocks: { count: 0, size: 0 } },
} as const;

/** The release at `dir`, generated once (scale 1: ~940k ggr rows) and reused by later runs. */
async function ensureRelease(dir: string, scale: number): Promise<ReleaseOnDisk> {
  const found = await latestRelease(dir);
  if (found) return found;
  line(`generating the ${scale}x release into ${path.relative(ROOT, dir)} (once; later runs reuse it)`);
  const child = spawn(process.execPath, ['--import', 'tsx', 'etl/cli.ts', 'generate', '--out', path.join(dir, '2026-11'), '--seed', '1', '--scale', String(scale)], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`generating ${dir} failed (exit ${code})`);
  return (await latestRelease(dir))!;
}

const dataDir = (scale: number) => path.join(WORK, scale === 1 ? 'data' : `x${scale}`);

async function main(): Promise<void> {
  const { values: options, positionals } = parseArgs({
    options: { quick: { type: 'boolean', default: false }, compare: { type: 'boolean', default: false }, baseline: { type: 'string' } },
    allowPositionals: true,
  });
  if (options.compare) {
    if (positionals.length !== 2) throw new Error('usage: npm run bench -- --compare A.json B.json');
    const [a, b] = await Promise.all(positionals.map(async (file) => JSON.parse(await fs.readFile(file, 'utf8')) as Result));
    const comparison = compareResults(a!, b!);
    console.log(formatComparison(a!, b!, comparison));
    process.exitCode = comparison.changes.some((c) => c.verdict === 'regression') ? 1 : 0;
    return;
  }
  const mode = options.quick ? 'quick' : 'full';
  const settings = MODES[mode];
  const started = performance.now();
  const date = new Date().toISOString();
  const host = machine();
  // Taken before anything runs: the checkout may change while a long run goes on.
  const checkout = commit(ROOT);
  await fs.rm(path.join(WORK, 'state'), { recursive: true, force: true });
  await fs.mkdir(WORK, { recursive: true });

  const release = await ensureRelease(dataDir(1), 1);
  const small = await ensureRelease(path.join(WORK, 'small'), 0.02);
  const scaled = [];
  for (const scale of settings.scales) scaled.push({ scale, release: await ensureRelease(dataDir(scale), scale) });

  line(`${mode} run on ${host.cpus}× ${host.model}, load average ${host.loadAverage.join(' ')}; release ${release.manifest.release}, ${release.manifest.datasets.ggr!.rows.toLocaleString('en')} ggr rows`);
  const ceilings = await queryCeilings(release, QUERY_SPECS, settings.duckdb, progress);
  line(`\n${TABLE_HEADER.join('\n')}`);
  const figures: Figure[] = [];
  const record = (f: Figure) => {
    figures.push(f);
    line(figureRow(f));
  };
  const serve = (name: string, env: Record<string, string>, data = dataDir(1), root?: string) => {
    progress(`starting the ${name} server (loading ${path.relative(ROOT, data)})`);
    return startServer({ DATA_DIR: data, STATE_DIR: path.join(WORK, name === 'limits' ? 'state-limits' : name === 'baseline' ? 'state-baseline' : 'state'), ...env }, path.join(WORK, 'logs', `${name}.log`), root);
  };
  /** Each scenario at 1 and 16 connections beside the bare server replaying its answers (and DuckDB alone for queries). */
  const measureAll = async (scenarios: ReadonlyArray<Scenario | { one: Scenario; sixteen: Scenario }>, server: BenchServer) => {
    const at = (entry: Scenario | { one: Scenario; sixteen: Scenario }, connections: number) => ('one' in entry ? (connections === 1 ? entry.one : entry.sixteen) : entry);
    const bare = await startBare(scenarios.flatMap((e) => [at(e, 1), at(e, 16)]).flatMap((s) => s.answers), path.join(WORK, 'bare'));
    try {
      for (const connections of [1, 16] as const) {
        const chosen = scenarios.map((e) => at(e, connections));
        const pairs = chosen.map((s, i) => ({
          ceiling: { url: bare.url, requests: bare.requests(s.answers) },
          service: { url: server.url, requests: withKey(s.requests, server.headers) },
          split: 'one' in scenarios[i]!,
        }));
        const timed = await rounds(pairs, connections, connections === 1 ? settings.requests.one : settings.requests.sixteen, settings.warmup, (text) => progress(`${connections} conn: ${text}`, false));
        for (const [i, s] of chosen.entries()) {
          const t = timed[i]!;
          const duckdb: QueryCeiling | undefined = ceilings.get(s.id);
          record(figure(s.id, s.title, connections, t.service, t.halves, { bare: t.ceiling, ...(duckdb && { duckdb: connections === 1 ? duckdb.one : duckdb.sixteen }) }));
        }
      }
    } finally {
      await bare.stop();
    }
  };
  /** Our side against another server answering the same page (the peer, a baseline checkout), alternated; fewer requests, as ClickHouse answers ~30 a second. */
  const against = async (id: string, title: string, name: string, other: Side, ours: Side) => {
    for (const connections of [1, 16] as const) {
      const [t] = await rounds([{ ceiling: other, service: ours }], connections, connections === 1 ? settings.peer.one : settings.peer.sixteen, settings.warmup, (text) => progress(`${title}, ${connections} conn: ${text}`, false));
      record(figure(id, title, connections, t!.service, t!.halves, { [name]: t!.ceiling }));
    }
  };

  // Cache off: every page queried and rendered. The mixed workload's answers are captured here too.
  let uncached = await serve('uncached', { CACHE_MAX_BYTES: '0' });
  let mixed!: { one: Scenario; sixteen: Scenario };
  let uncachedPage!: Captured;
  let peer: Result['peer'] = { clickhouse: { skipped: CLICKHOUSE_SKIP_REASON } };
  try {
    progress('capturing and checking every scenario\'s answer');
    const rows = new Map([...ceilings].map(([id, c]) => [id, c.rows]));
    const scenarios = await uncachedScenarios(uncached.url, uncached.headers, rows);
    uncachedPage = scenarios[0]!.answers[0]!;
    progress('drawing and capturing the mixed workload');
    mixed = await mixedWorkload(release, MIXED_SEED, settings.mixed, (p) => capture(uncached.url, p, uncached.headers, 200));
    await measureAll(scenarios, uncached);
    const ours = { url: uncached.url, requests: withKey(scenarios[0]!.requests, uncached.headers) };
    if (options.baseline) {
      // Both started afresh: a server that has just loaded is slower for a while than
      // one that has served every scenario (measured: 1.7x on the same code).
      const baseline = await serve('baseline', { CACHE_MAX_BYTES: '0' }, dataDir(1), path.resolve(options.baseline));
      const fresh = await serve('uncached-fresh', { CACHE_MAX_BYTES: '0' }).catch(async (err) => {
        await baseline.stop();
        throw err;
      });
      try {
        const page = (server: BenchServer) => ({ url: server.url, requests: withKey([{ path: PAGE, headers: {}, status: 200 }], server.headers) });
        await against('vs-baseline', `uncached page vs ${path.resolve(options.baseline)}`, 'baseline', page(baseline), page(fresh));
      } finally {
        await Promise.all([baseline.stop(), fresh.stop()]);
      }
    }
    if (CLICKHOUSE_BINARY) {
      progress('starting ClickHouse');
      const data = (JSON.parse(uncachedPage.body.toString()) as { data: [] }).data;
      const clickhouse = await startClickHouse(release, { rids: ceilings.get('uncached-page')!.rids, data, filters: PAGE_FILTERS }, progress);
      try {
        line(`ClickHouse ${clickhouse.version}: ggr loaded in ${clickhouse.loadSeconds.toFixed(1)} s; its page checked row for row against ours`);
        await against('vs-clickhouse', 'uncached page vs ClickHouse (same rows)', 'clickhouse', { url: clickhouse.url, requests: clickhouse.requests }, ours);
        peer = { clickhouse: { version: clickhouse.version, loadSeconds: clickhouse.loadSeconds } };
      } finally {
        await clickhouse.stop();
      }
    } else {
      line(`ClickHouse: ${CLICKHOUSE_SKIP_REASON}`);
    }
  } finally {
    await uncached.stop();
  }

  // The defaults (cache on): hits, and the mixed workload meeting the cache as users would.
  const cached = await serve('cached', {});
  try {
    await measureAll([...(await cachedScenarios(cached.url, cached.headers, uncachedPage)), mixed], cached);
  } finally {
    await cached.stop();
  }

  // Limits on, on a small release (refusals never touch data).
  const limits = await serve('limits', { BENCH_DISABLE_LIMITS: 'false', RATE_LIMIT_PER_DAY: '1', BAD_KEY_LIMIT_PER_MINUTE: '1000000000' }, path.join(WORK, 'small'));
  try {
    await measureAll(await limitScenarios(limits.url, limits.headers), limits);
  } finally {
    await limits.stop();
  }

  let swept: Result['sweep'] = { skipped: 'quick run: loading the 16x release alone takes a minute or more' };
  if (scaled.length) {
    line('');
    const releases = scaled.map(({ scale, release: r }) => ({ scale, dataDir: dataDir(scale), rows: r.manifest.datasets.ggr!.rows }));
    const result: Sweep = await sweep(releases, WORK, settings.blocks, progress);
    try {
      for (const e of result.entries) line(sweepRow(e, result.entries[0]));
      swept = { entries: result.entries };
      const x16 = result.servers.get(16)!;
      const answer = await capture(x16.url, PAGE, x16.headers, 200);
      line('');
      await measureAll([{ id: 'x16-page', title: 'uncached page, 16x release', requests: [{ path: PAGE, headers: {}, status: 200, body: answer.body }], answers: [answer] }], x16);
    } finally {
      await Promise.all([...result.servers.values()].map((s) => s.stop()));
    }
  }

  const result: Result = {
    schema: SCHEMA,
    mode,
    date,
    ...checkout,
    machine: host,
    settings: { requests: settings.requests, peer: settings.peer, warmup: settings.warmup, mixed: { ...settings.mixed, seed: MIXED_SEED }, release: release.manifest.release, ggrRows: release.manifest.datasets.ggr!.rows, noiseFloor: NOISE_FLOOR },
    figures,
    peer,
    sweep: swept,
    targets: evaluateTargets(figures, swept, 'skipped' in peer.clickhouse ? peer.clickhouse.skipped : undefined),
    durationSeconds: (performance.now() - started) / 1000,
  };
  await fs.mkdir(RESULTS, { recursive: true });
  const file = path.join(RESULTS, resultName(result));
  await fs.writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(summary(result, path.relative(ROOT, file)));
}

await main();
