import { execFileSync } from 'node:child_process';
import os from 'node:os';
import type { CancelFigure } from '../scenarios/cancel.ts';
import { derivedTargets } from '../scenarios/derived.ts';
import type { ExploreFigures } from '../scenarios/explore-page.ts';
import { type HistoryFigures, historyVsDuckdb } from '../scenarios/history.ts';
import { seriesTargets } from '../scenarios/series.ts';
import { cpuPerByteVsExport, type WholeDiffFigure } from '../scenarios/whole-diff.ts';
import type { Figure, Timing } from './measure.ts';
import type { SweepEntry } from './sweep.ts';

// The result file of one `npm run bench` (docs/performance.md, "The result file"):
// bench/results/<date>T<time>-<commit>-<mode>.json, not committed. One full run per machine
// kind is committed as that kind's baseline, bench/baselines/<kind>.json, which
// `npm run bench -- --compare RESULT.json` compares a run against.

export const SCHEMA = 'dqs-bench/2';
/** Below this, a difference between two samples of a figure is never called more than noise. */
export const NOISE_FLOOR = 0.05;

export interface Counts {
  readonly one: number;
  readonly sixteen: number;
}

/** The bench's own wrk runs against plain wrk on the same bare answer: below 0.9x the load client is the bottleneck. */
export interface SelfCheck {
  readonly scenario: string;
  readonly benchRps: number;
  readonly plainRps: number;
  readonly ratio: number;
}

export interface Target {
  readonly id: string;
  readonly text: string;
  /** The measured value the limit applies to; null when it could not be measured (with `skipped`). */
  readonly value: number | null;
  readonly limit: number;
  readonly met: boolean | null;
  /** Tolerance allowed above a parity limit (late ≤ first, Arrow ≤ JSON): the figures' own noise. */
  readonly tolerance?: number;
  readonly skipped?: string;
}

export interface Result {
  readonly schema: typeof SCHEMA;
  readonly mode: 'quick' | 'full';
  readonly date: string;
  readonly commit: string;
  /** Uncommitted changes in the checkout when it ran. */
  readonly dirty: boolean;
  readonly machine: { cpus: number; model: string; memoryMB: number; os: string; node: string; loadAverage: number[] };
  readonly settings: { timing: Timing; mixed: Counts & { seed: number }; release: string; ggrRows: number; noiseFloor: number };
  readonly figures: Figure[];
  readonly selfCheck: SelfCheck | null;
  readonly peer: { clickhouse: { version: string; loadSeconds: number } | { skipped: string } };
  readonly sweep: { entries: SweepEntry[] } | { skipped: string };
  /** Heavy work stopped by its deadline or its client (absent from results before it was measured). */
  readonly cancel?: CancelFigure[];
  /** Whole revisions diffs streamed as CSV and Arrow beside an export (absent from results before it was measured). */
  readonly wholeDiff?: WholeDiffFigure[];
  /** A whole ggr history over three releases beside DuckDB alone (absent from results before it was measured). */
  readonly history?: HistoryFigures;
  /** The Explore page in Chromium: first chart at 1× and (full runs) 16×, and its JavaScript's size; absent from results before it was measured. */
  readonly explore?: { readonly x1?: ExploreFigures; readonly x16?: ExploreFigures; readonly skipped?: string };
  readonly targets: Target[];
  readonly durationSeconds: number;
}

export function machine(): Result['machine'] {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    model: cpus[0]?.model ?? 'unknown',
    memoryMB: Math.round(os.totalmem() / 2 ** 20),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    loadAverage: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

export function commit(root: string): { commit: string; dirty: boolean } {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  try {
    return { commit: git('rev-parse', '--short=12', 'HEAD'), dirty: git('status', '--porcelain', '--untracked-files=no') !== '' };
  } catch {
    return { commit: 'unknown', dirty: true };
  }
}

/**
 * The kind of machine a result was measured on, from its CPU count and model, as a
 * file name: 2 of an `Intel(R) Xeon(R) Processor @ 2.50GHz` are
 * `2x-intel-xeon-processor-2-50ghz`. Runs are compared within a kind.
 */
export function machineKind(m: Pick<Result['machine'], 'cpus' | 'model'>): string {
  const model = m.model
    .toLowerCase()
    .replace(/\((?:r|tm|c)\)/g, ' ')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `${m.cpus}x-${model || 'unknown'}`;
}

export const resultName = (r: Pick<Result, 'date' | 'commit' | 'mode'>) =>
  `${r.date.slice(0, 19).replace(/:/g, '')}-${r.commit}-${r.mode}.json`;

const tolerance = (...figures: Figure[]) => Math.max(NOISE_FLOOR, ...figures.map((f) => f.noise.p50));

/** A figure's server CPU a request over its ceiling's; undefined where either was not measured. */
function cpuRatio(f: Figure | undefined, ceiling: string): number | undefined {
  const c = f?.ceilings[ceiling];
  if (!f?.service.serverCpu || !c?.serverCpu) return undefined;
  return f.service.serverCpu / f.service.rps / (c.serverCpu / c.rps);
}

/** Each target the bench judges (docs/performance.md "Targets"), met or missed, from this run's figures. */
export function evaluateTargets(
  figures: readonly Figure[],
  sweep: Result['sweep'],
  selfCheck: SelfCheck | undefined,
  peerSkipped?: string,
  explore?: Result['explore'],
  wholeDiff?: readonly WholeDiffFigure[],
  history?: HistoryFigures,
): Target[] {
  const get = (id: string) => figures.find((f) => f.id === id);
  const targets: Target[] = [];
  const atMost = (id: string, text: string, value: number | undefined, limit: number, tol?: number, skipped?: string) =>
    targets.push(
      value === undefined || Number.isNaN(value)
        ? { id, text, value: null, limit, met: null, skipped: skipped ?? 'not measured' }
        : { id, text, value, limit, met: value <= limit * (1 + (tol ?? 0)), ...(tol !== undefined && { tolerance: tol }) },
    );
  const atLeast = (id: string, text: string, value: number | undefined, limit: number, skipped?: string) =>
    targets.push(
      value === undefined || Number.isNaN(value)
        ? { id, text, value: null, limit, met: null, skipped: skipped ?? 'not measured' }
        : { id, text, value, limit, met: value >= limit },
    );

  const first = get('uncached-page@1');
  atMost('uncached-p50-vs-bare', "uncached page, 1 client: p50 ≤ 4× the bare server's p50 (same bytes)", first?.ratios.bare, 4);
  atLeast(
    'uncached-rps-vs-bare',
    "uncached page, 16 connections: ≥ 0.2× the bare server's req/s",
    get('uncached-page@16')?.ratios.bare,
    0.2,
  );
  atLeast(
    'uncached-rps-vs-clickhouse',
    "uncached page, 16 connections: ≥ 5× ClickHouse's req/s",
    get('vs-clickhouse@16')?.ratios.clickhouse,
    5,
    peerSkipped,
  );
  const late = get('late-page@1');
  atMost(
    'late-vs-first',
    'late page p50 ≤ first page p50 (1 client, within noise)',
    late && first && late.service.p50 / first.service.p50,
    1,
    late && first && tolerance(late, first),
  );
  atLeast('load-client', "self-check: the bench's load client ≥ 0.9× plain wrk's req/s from the same bare server", selfCheck?.ratio, 0.9);
  atLeast(
    'uncached-rps-vs-duckdb',
    "uncached page, 16 connections: ≥ 0.8× DuckDB alone's req/s, same query and render",
    get('uncached-page@16')?.ratios.duckdb,
    0.8,
  );
  // 0.8x of bare was asked once, measured by a load client that was itself the limit; these are set by a client that is not.
  atLeast('cached-json-vs-bare', 'cached hit, JSON identity, 16 connections: ≥ 0.75× bare req/s', get('cached-json@16')?.ratios.bare, 0.75);
  atLeast('cached-br-vs-bare', 'cached hit, br, 16 connections: ≥ 0.45× bare req/s', get('cached-br@16')?.ratios.bare, 0.45);
  // What the service spends a request beyond its own ceiling's process, in server CPU (req/s is
  // wrk's as much as the server's). A cached hit takes every step of the pipeline (key, limit,
  // replay, count, log) and the Koa floor none, so its bound leaves room for them. At 16
  // connections a slower server also pays more of the client's wake-ups, so the ratio grows
  // faster than the work there; both loads are judged (docs/performance.md).
  for (const [scenario, title] of [
    ['cached-br', 'br'],
    ['cached-json', 'JSON identity'],
  ] as const) {
    for (const [connections, suffix, load] of [
      [16, '', '16 connections'],
      [1, '@1', '1 client'],
    ] as const) {
      atMost(
        `${scenario}-cpu-vs-koa${suffix}`,
        `cached hit, ${title}, ${load}: server CPU a request ≤ 2× the Koa floor's`,
        cpuRatio(get(`${scenario}@${connections}`), 'koa'),
        2,
      );
    }
  }
  atMost(
    'uncached-cpu-vs-duckdb',
    "uncached page, 16 connections: server CPU a request ≤ 1.3× DuckDB alone's",
    cpuRatio(get('uncached-page@16'), 'duckdb'),
    1.3,
  );
  const aggregate = get('uncached-aggregate@1');
  const aggregate16 = get('x16-aggregate@1');
  atMost('aggregate-vs-duckdb', "uncached aggregate, 1 client: p50 ≤ 1.2× DuckDB alone's, same GROUP BY", aggregate?.ratios.duckdb, 1.2);
  atMost(
    'facets-cpu-vs-duckdb',
    "uncached facets, 1 client: server CPU a request ≤ 2× DuckDB alone's, same counts",
    cpuRatio(get('uncached-facets@1'), 'duckdb'),
    2,
  );
  const arrow = get('arrow-page@1');
  const csv = get('csv-page@1');
  atMost(
    'arrow-vs-json',
    'uncached Arrow page p50 ≤ JSON (1 client, within noise)',
    arrow && first && arrow.service.p50 / first.service.p50,
    1,
    arrow && first && tolerance(arrow, first),
  );
  atMost('csv-vs-json', 'uncached CSV page p50 ≤ 1.2× JSON (1 client)', csv && first && csv.service.p50 / first.service.p50, 1.2);
  const skipped = 'skipped' in sweep ? sweep.skipped : undefined;
  const entries = 'entries' in sweep ? sweep.entries : [];
  const x1 = entries.find((e) => e.scale === 1);
  const x16 = entries.find((e) => e.scale === 16);
  atMost(
    'x16-latency',
    '16× release: uncached page p50 ≤ 1.5× the 1× figure (1 client)',
    x16 && x1 && x16.page.p50 / x1.page.p50,
    1.5,
    undefined,
    skipped,
  );
  atMost('x16-rss', '16× release: steady RSS ≤ 3 GB (MB)', x16?.steadyRssMB, 3072, undefined, skipped);
  atMost(
    'x16-aggregate',
    '16× release: uncached aggregate p50 ≤ 3× the 1× figure (1 client)',
    aggregate16 && aggregate && aggregate16.service.p50 / aggregate.service.p50,
    3,
    undefined,
    skipped,
  );
  derivedTargets(get, atMost, skipped);
  seriesTargets(get, atMost, skipped);
  const browser = explore?.skipped;
  atMost(
    'explore-first-chart-x16',
    'Explore page, 16× release: first drawn chart ≤ 1.5 s after navigation (p50 of 10 fresh loads)',
    explore?.x16?.p50 && explore.x16.p50 / 1000,
    1.5,
    undefined,
    browser ?? skipped,
  );
  atMost(
    'explore-javascript',
    'Explore page: its JavaScript ≤ 150 kB gzipped',
    explore?.x1 && explore.x1.scriptGzipBytes / 1024,
    150,
    undefined,
    browser,
  );
  for (const [stream, name] of [
    ['whole diff, CSV', 'CSV'],
    ['whole diff, Arrow', 'Arrow'],
  ] as const) {
    atMost(
      `whole-diff-${name.toLowerCase()}-cpu-per-byte`,
      `whole diff as ${name}: server CPU per byte ≤ 2× an export's (docs/performance.md "Whole diffs")`,
      wholeDiff && cpuPerByteVsExport(wholeDiff, stream),
      2,
    );
    atMost(
      `whole-diff-${name.toLowerCase()}-steps`,
      `whole diff as ${name}: no event-loop step over 50 ms while it streams`,
      wholeDiff?.find((f) => f.stream === stream)?.stepsOver50ms,
      0,
    );
  }
  atMost(
    'history-cpu-vs-duckdb',
    'whole ggr history (output=changes, 3 releases) as CSV: server CPU ≤ 2× DuckDB alone writing the same rows (docs/performance.md "History")',
    history && historyVsDuckdb(history),
    2,
  );
  // The same release named by as_of= and by release=, alternated in the same rounds: parity
  // within the noise of their ratio between the rounds' two halves (never under the floor).
  for (const [id, what] of [
    ['as-of-page', 'page'],
    ['as-of-aggregate', 'aggregate'],
  ] as const) {
    const f = get(`${id}@16`);
    atMost(
      `${id}-cpu-vs-release`,
      `uncached ${what}, 16 connections: server CPU a request with as_of= ≤ with release= of the same release (within noise)`,
      cpuRatio(f, 'release'),
      1,
      f && Math.max(NOISE_FLOOR, f.ratioNoise),
    );
  }
  return targets;
}
