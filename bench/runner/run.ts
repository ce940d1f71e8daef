import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { latestRelease, type ReleaseOnDisk } from '../../src/releases/on-disk.ts';
import { type ServiceProcess, startServer } from '../../tools/service-process.ts';
import { type Captured, startBare } from '../ceilings/bare.ts';
import { CLICKHOUSE_BINARY, CLICKHOUSE_SKIP_REASON, startClickHouse } from '../ceilings/clickhouse.ts';
import { AGGREGATE, AGGREGATE_SQL, aggregateAlone, checkGroups, ourGroups } from '../ceilings/duckdb-aggregate.ts';
import { FACETS, facetsAlone } from '../ceilings/duckdb-facets.ts';
import { openQueryCeilings } from '../ceilings/duckdb-pages.ts';
import { CANCEL_HEADER, cancelFigures, cancelRow } from '../scenarios/cancel.ts';
import { derivedAtScale, derivedHits, derivedScenarios } from '../scenarios/derived.ts';
import { EXPLORE_SKIP_REASON, type ExploreFigures, exploreFigures, exploreRow } from '../scenarios/explore-page.ts';
import {
  asOfFigures,
  HISTORY_HEADER,
  HISTORY_SERVER,
  type HistoryFigures,
  historyFigures,
  historyReleases,
  historyRows,
} from '../scenarios/history.ts';
import { mixedWorkload } from '../scenarios/mixed.ts';
import { seriesAtScale, seriesScenarios } from '../scenarios/series.ts';
import {
  cachedScenarios,
  capture,
  limitScenarios,
  PAGE,
  PAGE_FILTERS,
  QUERY_SPECS,
  type Scenario,
  scenario,
  uncachedScenarios,
  withKey,
} from '../scenarios/suite.ts';
import { USAGE_SERVERS, type UsageServers, usageFigures } from '../scenarios/usage-counting.ts';
import { WHOLE_DIFF_HEADER, wholeDiffFigures, wholeDiffRow } from '../scenarios/whole-diff.ts';
import { compareResults, formatComparison } from './compare.ts';
import type { Stats } from './load.ts';
import { type Figure, figure, rounds, type ServerSide, type Timing } from './measure.ts';
import { PROFILE_SCENARIOS, profileScenario } from './profile.ts';
import { figureRow, line, progress, summary, sweepRow, TABLE_HEADER, usageCost } from './report.ts';
import { commit, evaluateTargets, machine, machineKind, NOISE_FLOOR, type Result, resultName, SCHEMA, type SelfCheck } from './result.ts';
import { type Sweep, sweep } from './sweep.ts';
import { plainWrk, WRK_BINARY, WRK_SKIP_REASON, wrk } from './wrk.ts';

// `npm run bench`: the suite (docs/performance.md; `npm run bench -- --help` for every
// form). The service runs as users run it, the compiled `dist/main.js` in its own process; timed load
// comes from wrk over loopback, and undici checks every answer before and after. Every
// figure sits beside its ceilings from the same run: a bare node:http server sending
// the scenario's exact bytes and headers, a minimal Koa app sending them (cached
// scenarios), DuckDB alone on the same query, ClickHouse on the same page and GROUP BY
// where installed. A run's result goes to bench/results/ (not committed); one full run
// per machine kind is committed as bench/baselines/<kind>.json, what --compare with one
// result compares it against.

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const WORK = path.join(ROOT, 'tmp', 'bench');
const RESULTS = path.join(ROOT, 'bench', 'results');
const BASELINES = path.join(ROOT, 'bench', 'baselines');
const MIXED_SEED = 1;

const MODES = {
  // Full: about 45 minutes on 2 cores once the releases exist (2,700 s measured on 2026-11-28).
  full: {
    timing: { rounds: 4, seconds: 2, warmup: 200 },
    mixed: { one: 800, sixteen: 4000 },
    aggregateAlone: { one: 100, sixteen: 200 },
    scales: [1, 4, 16],
    blocks: { count: 8, size: 100 },
  },
  // About 9 minutes on 2 cores (522 s measured on 2026-11-28): two rounds of 1-second runs, and no scale sweep or 16x figures
  // (loading the 16x release alone takes a minute or more, generated or not).
  quick: {
    timing: { rounds: 2, seconds: 1, warmup: 30 },
    mixed: { one: 120, sixteen: 400 },
    aggregateAlone: { one: 20, sixteen: 40 },
    scales: [],
    blocks: { count: 0, size: 0 },
  },
} as const satisfies Record<string, { timing: Timing } & Record<string, unknown>>;

/** The release at `dir`, generated once (scale 1: ~940k ggr rows) and reused by later runs. */
async function ensureRelease(dir: string, scale: number): Promise<ReleaseOnDisk> {
  const found = await latestRelease(dir);
  if (found) return found;
  line(`generating the ${scale}x release into ${path.relative(ROOT, dir)} (once; later runs reuse it)`);
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'etl/cli.ts', 'generate', '--out', path.join(dir, '2026-11'), '--seed', '1', '--scale', String(scale)],
    { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`generating ${dir} failed (exit ${code})`);
  return (await latestRelease(dir))!;
}

/** One side of a comparison with --baseline: the request `path` with `headers`, to the baseline checkout's server or ours. */
type SideOf = (path: string, headers: Record<string, string>, whose: 'baseline' | 'ours') => ServerSide;

const USAGE = `usage: npm run bench [-- OPTIONS]
  (none)                     the full suite: ~45 min on 2 cores (the first run also generates releases: 2 min)
  --quick                    every scenario in shorter runs, no scale sweep or 16x figures: ~9 min
  --baseline DIR             also the uncached page and cached hits of the checkout at DIR beside this one's
  --profile SCENARIO         the service under one scenario with --cpu-prof; one of
                             ${PROFILE_SCENARIOS.join(', ')}
  --compare RESULT.json      RESULT against the baseline of the machine kind it was measured on
  --compare A.json B.json    B against A
  --baselines-dir DIR        where --compare RESULT.json finds baselines (default: bench/baselines)

A run writes its result to bench/results/<date>T<time>-<commit>-<mode>.json (not committed).
--compare judges each figure by its ratio to the ceiling timed beside it and exits 1 on a
regression beyond noise.

Baselines: one full run per machine kind, committed as bench/baselines/<kind>.json; <kind>
comes from the CPU count and model a result records (this machine: ${machineKind(machine())}).
To make a new baseline, run the full suite on that kind of machine and copy its result over it:
  npm run bench
  cp bench/results/<date>T<time>-<commit>-full.json bench/baselines/<kind>.json
then commit that file, and update the table in docs/performance.md from it.`;

/** A result file, read. */
const readResult = async (file: string) => JSON.parse(await fs.readFile(file, 'utf8')) as Result;

/** The baseline of `kind` in `dir`; throws, saying how to make one, when there is none. */
async function readBaseline(dir: string, kind: string): Promise<{ file: string; result: Result }> {
  const file = path.join(dir, `${kind}.json`);
  const result = await readResult(file).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
    const held = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')) : [];
    throw new Error(
      `no baseline for this machine kind (${kind}): ${path.relative(ROOT, file) || file} does not exist (baselines: ${held.join(', ') || 'none'}). Compare two results with --compare A.json B.json, or make this kind's baseline: run the full suite and copy its result to ${path.relative(ROOT, file)}`,
    );
  });
  if (machineKind(result.machine) !== kind)
    throw new Error(`${file} was measured on ${machineKind(result.machine)}, not ${kind}: copy a result of a ${kind} machine over it`);
  return { file, result };
}

const dataDir = (scale: number) => path.join(WORK, scale === 1 ? 'data' : `x${scale}`);

async function main(): Promise<void> {
  const { values: options, positionals } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      compare: { type: 'boolean', default: false },
      'baselines-dir': { type: 'string', default: BASELINES },
      baseline: { type: 'string' },
      profile: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: true,
  });
  if (options.help) {
    console.log(USAGE);
    return;
  }
  if (options.compare) {
    if (positionals.length !== 1 && positionals.length !== 2) throw new Error(`--compare takes one result or two\n${USAGE}`);
    let a: Result;
    let b: Result;
    if (positionals.length === 1) {
      b = await readResult(positionals[0]!);
      const baseline = await readBaseline(path.resolve(options['baselines-dir']), machineKind(b.machine)).catch((err: Error) => err);
      if (baseline instanceof Error) {
        console.error(`bench: ${baseline.message}`);
        process.exitCode = 2;
        return;
      }
      a = baseline.result;
      console.log(`A is the baseline of ${machineKind(b.machine)}: ${path.relative(ROOT, baseline.file)}`);
    } else {
      [a, b] = (await Promise.all(positionals.map(readResult))) as [Result, Result];
    }
    const comparison = compareResults(a, b);
    console.log(formatComparison(a, b, comparison));
    process.exitCode = comparison.changes.some((c) => c.verdict === 'regression') ? 1 : 0;
    return;
  }
  if (!WRK_BINARY) {
    line(`bench: ${WRK_SKIP_REASON}; nothing is timed without it (the bench's own undici client was the bottleneck it measured)`);
    process.exitCode = 2;
    return;
  }
  if (options.profile !== undefined) {
    if (!PROFILE_SCENARIOS.includes(options.profile))
      throw new Error(`--profile takes one of ${PROFILE_SCENARIOS.join(', ')}; got ${JSON.stringify(options.profile)}`);
    await ensureRelease(dataDir(1), 1);
    await profileScenario(options.profile, { dataDir: dataDir(1), work: WORK, results: RESULTS, seconds: 10 });
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
  await ensureRelease(path.join(WORK, 'small'), 0.02);
  const scaled = [];
  for (const scale of settings.scales) scaled.push({ scale, release: await ensureRelease(dataDir(scale), scale) });

  line(
    `${mode} run on ${host.cpus}× ${host.model}, load average ${host.loadAverage.join(' ')}; release ${release.manifest.release}, ${release.manifest.datasets.ggr!.rows.toLocaleString('en')} ggr rows`,
  );
  const queries = await openQueryCeilings(release, QUERY_SPECS, progress);
  /** DuckDB alone on the aggregates' GROUP BY and the facets' counts, as they are measured (the pages' is a side of their rounds). */
  const aloneCeilings = new Map<string, { one: Stats; sixteen: Stats }>();
  line(`\n${TABLE_HEADER.join('\n')}`);
  const figures: Figure[] = [];
  const explore: { x1?: ExploreFigures; x16?: ExploreFigures; skipped?: string } = EXPLORE_SKIP_REASON
    ? { skipped: EXPLORE_SKIP_REASON }
    : {};
  const record = (f: Figure) => {
    figures.push(f);
    line(figureRow(f));
  };
  const serve = (name: string, env: Record<string, string>, data = dataDir(1), root?: string) => {
    progress(`starting the ${name} server (loading ${path.relative(ROOT, data)})`);
    return startServer(
      {
        DATA_DIR: data,
        STATE_DIR: path.join(WORK, name === 'limits' ? 'state-limits' : name.endsWith('baseline') ? 'state-baseline' : 'state'),
        ...env,
      },
      path.join(WORK, 'logs', `${name}.log`),
      root,
    );
  };
  /**
   * Each scenario at 1 and 16 connections beside the bare server replaying its answers,
   * the Koa floor replaying them too (`floor`), and DuckDB alone for queries: timed
   * in the same rounds for pages (while `queries` is open), beforehand for aggregates.
   */
  const measureAll = async (
    scenarios: ReadonlyArray<Scenario | { one: Scenario; sixteen: Scenario }>,
    server: ServiceProcess,
    floor = false,
  ) => {
    const at = (entry: Scenario | { one: Scenario; sixteen: Scenario }, connections: number) =>
      'one' in entry ? (connections === 1 ? entry.one : entry.sixteen) : entry;
    const answers = scenarios.flatMap((e) => [at(e, 1), at(e, 16)]).flatMap((s) => s.answers);
    const bare = await startBare(answers, path.join(WORK, 'bare'));
    const koa = floor ? await startBare(answers, path.join(WORK, 'koa'), 'koa') : undefined;
    try {
      for (const connections of [1, 16] as const) {
        const chosen = scenarios.map((e) => at(e, connections));
        const groups = chosen.map((s, i) => ({
          ceilings: {
            bare: { url: bare.url, requests: bare.requests(s.answers), pid: bare.pid },
            ...(koa && { koa: { url: koa.url, requests: koa.requests(s.answers), pid: koa.pid } }),
            ...(queries.pages.has(s.id) && { duckdb: queries.side(s.id) }),
          },
          service: { url: server.url, requests: withKey(s.requests, server.headers), pid: server.pid },
          split: 'one' in scenarios[i]!,
        }));
        const timed = await rounds(groups, connections, settings.timing, (text) => progress(`${connections} conn: ${text}`, false));
        for (const [i, s] of chosen.entries()) {
          const t = timed[i]!;
          const duckdb = aloneCeilings.get(s.id);
          record(
            figure(
              s.id,
              s.title,
              connections,
              t.service,
              t.halves,
              { ...t.ceilings, ...(duckdb && { duckdb: connections === 1 ? duckdb.one : duckdb.sixteen }) },
              t.ceilingHalves,
            ),
          );
        }
        const br = chosen.find((s) => s.id === 'cached-br');
        if (br && connections === 16) selfCheck = await checkLoadClient(bare.url, bare.requests(br.answers)[0]!.path);
      }
    } finally {
      await Promise.all([bare.stop(), koa?.stop()]);
    }
  };
  /**
   * The self-check: the bench's wrk runs (its Lua script, its summary) against plain
   * wrk on the same bare answer, alternated; below 0.9x the load client is the limit.
   */
  let selfCheck: SelfCheck | undefined;
  const checkLoadClient = async (url: string, bareRequestPath: string): Promise<SelfCheck> => {
    progress("self-check: the bench's load client against plain wrk on the bare server");
    let bench = 0;
    let plain = 0;
    for (let k = 0; k < settings.timing.rounds; k++) {
      bench +=
        (await wrk(url, [{ path: bareRequestPath, headers: {}, status: 200 }], 16, { seconds: settings.timing.seconds })).latencies.length /
        settings.timing.seconds;
      plain += await plainWrk(`${url}${bareRequestPath}`, 16, settings.timing.seconds);
    }
    const check = {
      scenario: 'cached-br@16',
      benchRps: bench / settings.timing.rounds,
      plainRps: plain / settings.timing.rounds,
      ratio: bench / plain,
    };
    line(
      `self-check: the bench's client got ${check.benchRps.toFixed(0)} req/s from the bare server, plain wrk ${check.plainRps.toFixed(0)}: ${check.ratio.toFixed(2)}× (≥ 0.9× or the client is the bottleneck)`,
    );
    return check;
  };
  /**
   * The checkout at `root` and this one, each started afresh with `env`, for `timed`
   * to alternate: a server that has just loaded is slower for a while than one that
   * has served every scenario (measured: 1.7x on the same code). `label` names their
   * logs (tmp/bench/logs/<label>-baseline.log, <label>-fresh.log).
   */
  const besideBaseline = async (label: string, root: string, env: Record<string, string>, timed: (side: SideOf) => Promise<void>) => {
    const baseline = await serve(`${label}-baseline`, env, dataDir(1), root);
    const fresh = await serve(`${label}-fresh`, env).catch(async (err) => {
      await baseline.stop();
      throw err;
    });
    try {
      const servers = { baseline, ours: fresh };
      await timed((p, headers, whose) => ({
        url: servers[whose].url,
        requests: withKey([{ path: p, headers, status: 200 }], servers[whose].headers),
        pid: servers[whose].pid,
      }));
    } finally {
      await Promise.all([baseline.stop(), fresh.stop()]);
    }
  };
  /** Our side against another server answering the same request (the peer, a baseline checkout), alternated. */
  const against = async (id: string, title: string, name: string, other: ServerSide, ours: ServerSide) => {
    for (const connections of [1, 16] as const) {
      const [t] = await rounds([{ ceilings: { [name]: other }, service: ours }], connections, settings.timing, (text) =>
        progress(`${title}, ${connections} conn: ${text}`, false),
      );
      record(figure(id, title, connections, t!.service, t!.halves, t!.ceilings, t!.ceilingHalves));
    }
  };

  // Cache off: every page queried and rendered, every aggregate grouped (no kept
  // results). The mixed workload's answers are captured here too.
  const uncached = await serve('uncached', { CACHE_MAX_BYTES: '0', AGGREGATE_KEEP_BYTES: '0' });
  let mixed!: { one: Scenario; sixteen: Scenario };
  let uncachedPage!: Captured;
  let aggregate!: Captured;
  let facets!: Captured;
  let peer: Result['peer'] = { clickhouse: { skipped: CLICKHOUSE_SKIP_REASON } };
  try {
    progress("capturing and checking every scenario's answer");
    const rows = new Map([...queries.pages].map(([id, c]) => [id, c.rows]));
    const scenarios = await uncachedScenarios(uncached.url, uncached.headers, rows);
    uncachedPage = scenarios[0]!.answers[0]!;
    aggregate = await capture(uncached.url, AGGREGATE, uncached.headers, 200);
    progress("DuckDB alone: the aggregate's GROUP BY");
    aloneCeilings.set('uncached-aggregate', await aggregateAlone(release, 1, ourGroups(aggregate.body), settings.aggregateAlone));
    scenarios.push(scenario('uncached-aggregate', 'uncached aggregate, region × year', AGGREGATE, {}, aggregate));
    facets = await capture(uncached.url, FACETS, uncached.headers, 200);
    progress("DuckDB alone: the facets' counts");
    aloneCeilings.set('uncached-facets', await facetsAlone(release, facets.body, settings.aggregateAlone));
    scenarios.push(scenario('uncached-facets', '/v1/facets under two filters, uncached', FACETS, {}, facets));
    scenarios.push(...(await derivedScenarios(uncached.url, uncached.headers)));
    scenarios.push(...(await seriesScenarios(uncached.url, uncached.headers)));
    progress('drawing and capturing the mixed workload');
    mixed = await mixedWorkload(release, MIXED_SEED, settings.mixed, (p) => capture(uncached.url, p, uncached.headers, 200));
    await measureAll(scenarios, uncached);
    const ours = (path_: string) => ({
      url: uncached.url,
      requests: withKey([{ path: path_, headers: {}, status: 200 }], uncached.headers),
      pid: uncached.pid,
    });
    if (options.baseline) {
      const root = path.resolve(options.baseline);
      await besideBaseline('uncached', root, { CACHE_MAX_BYTES: '0' }, (side) =>
        against('vs-baseline', `uncached page vs ${root}`, 'baseline', side(PAGE, {}, 'baseline'), side(PAGE, {}, 'ours')),
      );
    }
    if (CLICKHOUSE_BINARY) {
      progress('starting ClickHouse');
      const data = (JSON.parse(uncachedPage.body.toString()) as { data: [] }).data;
      const clickhouse = await startClickHouse(
        release,
        { rids: queries.pages.get('uncached-page')!.rids, data, filters: PAGE_FILTERS },
        progress,
      );
      try {
        line(
          `ClickHouse ${clickhouse.version}: ggr loaded in ${clickhouse.loadSeconds.toFixed(1)} s; its page checked row for row against ours`,
        );
        await against(
          'vs-clickhouse',
          'uncached page vs ClickHouse (same rows)',
          'clickhouse',
          { url: clickhouse.url, requests: clickhouse.requests },
          ours(PAGE),
        );
        const groupBy = `/?query=${encodeURIComponent(`${AGGREGATE_SQL.replace('count(*) AS rows', 'toUInt64(count()) AS rows')} FORMAT JSONEachRow`)}`;
        const theirs = (await clickhouse.get(groupBy))
          .toString()
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { region: string; year: number; ggr_sum: number; rows: string });
        checkGroups(
          `ClickHouse ${clickhouse.version}`,
          ourGroups(aggregate.body),
          new Map(theirs.map((r) => [`${r.region}|${r.year}`, { sum: r.ggr_sum, rows: Number(r.rows) }])),
        );
        await against(
          'aggregate-vs-clickhouse',
          'uncached aggregate vs ClickHouse GROUP BY',
          'clickhouse',
          { url: clickhouse.url, requests: [{ path: groupBy, headers: {}, status: 200 }] },
          ours(AGGREGATE),
        );
        peer = { clickhouse: { version: clickhouse.version, loadSeconds: clickhouse.loadSeconds } };
      } finally {
        await clickhouse.stop();
      }
    } else {
      line(`ClickHouse: ${CLICKHOUSE_SKIP_REASON}`);
    }
  } finally {
    queries.close();
    await uncached.stop();
  }

  // The defaults (cache on): hits, and the mixed workload meeting the cache as users would.
  const cached = await serve('cached', {});
  try {
    const hits = await cachedScenarios(cached.url, cached.headers, uncachedPage);
    await capture(cached.url, AGGREGATE, cached.headers, 200);
    await capture(cached.url, FACETS, cached.headers, 200);
    const facetsHit = await capture(cached.url, FACETS, cached.headers, 200, (a) =>
      a.body.equals(facets.body) ? undefined : 'a hit differs from the uncached facets',
    );
    const aggregateHit = await capture(cached.url, AGGREGATE, cached.headers, 200, (a) =>
      a.body.equals(aggregate.body) ? undefined : 'a hit differs from the uncached aggregate',
    );
    await measureAll(
      [
        scenario('cached-aggregate', 'cached aggregate, region × year', AGGREGATE, {}, aggregateHit),
        scenario('cached-facets', '/v1/facets under two filters, cached', FACETS, {}, facetsHit),
        ...(await derivedHits(cached.url, cached.headers)),
        ...hits,
        mixed,
      ],
      cached,
      true,
    );
    if (!EXPLORE_SKIP_REASON) {
      progress('the Explore page in Chromium, 1× release');
      explore.x1 = await exploreFigures(cached.url, cached.headers['x-api-key']!);
      line(exploreRow('Explore page, 1× release', explore.x1));
    }
  } finally {
    await cached.stop();
  }
  // Usage counting (issue 54): a counting server beside two that do not (bench/scenarios/usage-counting.ts).
  {
    const servers: Partial<UsageServers> = {};
    try {
      for (const [name, env] of Object.entries(USAGE_SERVERS)) servers[name as keyof UsageServers] = await serve(`usage-${name}`, env);
      for (const f of await usageFigures(servers as UsageServers, settings.timing, [1, 16], (text) => progress(text, false))) {
        record(f);
        line(usageCost(f));
      }
    } finally {
      await Promise.all(Object.values(servers).map((s) => s.stop()));
    }
  }
  if (options.baseline) {
    // Cache on, as served by default: code or node flags that change a hit judged in one run.
    const root = path.resolve(options.baseline);
    await besideBaseline('cached', root, {}, async (side) => {
      for (const [id, coding] of [
        ['cached-br-vs-baseline', 'br'],
        ['cached-json-vs-baseline', 'identity'],
      ] as const) {
        const headers = { 'accept-encoding': coding };
        await against(
          id,
          `cached hit, JSON ${coding}, vs ${root}`,
          'baseline',
          side(PAGE, headers, 'baseline'),
          side(PAGE, headers, 'ours'),
        );
      }
    });
  }

  // Limits on, on a small release (refusals never touch data).
  const limits = await serve(
    'limits',
    { BENCH_DISABLE_LIMITS: 'false', RATE_LIMIT_PER_DAY: '1', BAD_KEY_LIMIT_PER_MINUTE: '1000000000' },
    path.join(WORK, 'small'),
  );
  try {
    await measureAll(await limitScenarios(limits.url, limits.headers), limits);
  } finally {
    await limits.stop();
  }

  // Heavy work stopped: its CPU after a deadline or a client gone, beside the same work run to its end.
  line(`\n${CANCEL_HEADER}`);
  const cancel = await cancelFigures(WORK, progress);
  for (const f of cancel) line(cancelRow(f));

  // Whole diffs streamed as CSV and Arrow, beside an export of the same dataset, on the same releases.
  line(`\n${WHOLE_DIFF_HEADER}`);
  const wholeDiff = await wholeDiffFigures(WORK, progress);
  for (const f of wholeDiff) line(wholeDiffRow(f, wholeDiff));

  // A whole history over three releases beside DuckDB alone, then as_of= beside release= on the same server.
  const historyData = await historyReleases(WORK, progress);
  const historyServer = await serve('history', HISTORY_SERVER, historyData);
  let history: HistoryFigures;
  try {
    history = await historyFigures(historyServer, historyData, WORK, progress);
    line(`\n${HISTORY_HEADER}`);
    for (const row of historyRows(history)) line(row);
    line('');
    for (const f of await asOfFigures(historyServer, historyData, settings.timing, (text) => progress(text, false))) record(f);
  } finally {
    await historyServer.stop();
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
      const grouped = await capture(x16.url, AGGREGATE, x16.headers, 200);
      progress("DuckDB alone: the aggregate's GROUP BY on the 16x release");
      aloneCeilings.set(
        'x16-aggregate',
        await aggregateAlone(scaled.find((e) => e.scale === 16)!.release, 1, ourGroups(grouped.body), settings.aggregateAlone),
      );
      line('');
      await measureAll(
        [
          scenario('x16-page', 'uncached page, 16x release', PAGE, {}, answer),
          scenario('x16-aggregate', 'uncached aggregate, 16x release', AGGREGATE, {}, grouped),
          ...(await derivedAtScale(x16.url, x16.headers)),
          ...(await seriesAtScale(x16.url, x16.headers)),
        ],
        x16,
      );
      if (!EXPLORE_SKIP_REASON) {
        progress('the Explore page in Chromium, 16× release');
        explore.x16 = await exploreFigures(x16.url, x16.headers['x-api-key']!);
        line(exploreRow('Explore page, 16× release', explore.x16));
      }
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
    settings: {
      timing: settings.timing,
      mixed: { ...settings.mixed, seed: MIXED_SEED },
      release: release.manifest.release,
      ggrRows: release.manifest.datasets.ggr!.rows,
      noiseFloor: NOISE_FLOOR,
    },
    figures,
    selfCheck: selfCheck ?? null,
    peer,
    sweep: swept,
    cancel,
    wholeDiff,
    history,
    explore,
    targets: evaluateTargets(
      figures,
      swept,
      selfCheck,
      'skipped' in peer.clickhouse ? peer.clickhouse.skipped : undefined,
      explore,
      wholeDiff,
      history,
    ),
    durationSeconds: (performance.now() - started) / 1000,
  };
  await fs.mkdir(RESULTS, { recursive: true });
  const file = path.join(RESULTS, resultName(result));
  await fs.writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(summary(result, path.relative(ROOT, file)));
  const kind = machineKind(host);
  const baseline = path.join(BASELINES, `${kind}.json`);
  console.log(
    existsSync(baseline)
      ? `against this machine kind's baseline: npm run bench -- --compare ${path.relative(ROOT, file)}`
      : `no baseline for ${kind} yet; to make this run it (a full run): cp ${path.relative(ROOT, file)} ${path.relative(ROOT, baseline)}`,
  );
}

await main();
