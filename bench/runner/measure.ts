import { load, type Request, type Run, type Stats, spread, summarizeRuns } from './load.ts';
import { wrk } from './wrk.ts';

// How figures are timed: every scenario of a server beside its ceilings, in rounds.
// Each round runs every group once, ceilings and service in turns (ceilings first in
// even rounds, service first in odd ones), so a burst of other load on this shared
// machine falls on every side and on every scenario alike, and figures compared with
// each other (late vs first page, Arrow vs JSON) come from the same stretch of time.
// The first half of the rounds and the second are the two samples whose spread is a
// figure's noise. Load comes from wrk (bench/runner/wrk.ts); undici sends the warm-up, which
// checks every answer byte for byte, and checks them all again after the rounds. A
// local side (DuckDB alone) runs in this process in its turn, one worker per
// connection; its answers were checked when it was opened.

/** A server one side of a comparison sends its requests to. */
export interface ServerSide {
  readonly url: string;
  readonly requests: readonly Request[];
  /** The process answering, for its CPU share. */
  readonly pid?: number;
}

/** Work timed in this process by `workers` concurrent workers for `seconds`. */
export interface LocalSide {
  readonly local: (workers: number, seconds: number) => Promise<Run>;
}

export type Side = ServerSide | LocalSide;

/** A local side's warm-up, as a server side's is `timing.warmup` requests. */
const LOCAL_WARMUP_SECONDS = 0.3;

export interface Group {
  /** Each ceiling by name (bare, koa, clickhouse…). */
  readonly ceilings: Readonly<Record<string, Side>>;
  readonly service: ServerSide;
  /** The requests are a workload sent once: each round takes the next share of it. */
  readonly split?: boolean;
}

export interface Timed {
  readonly ceilings: Record<string, Stats>;
  readonly service: Stats;
  /** The service's first and second half of rounds. */
  readonly halves: [Stats, Stats];
  /** Each ceiling's, likewise. */
  readonly ceilingHalves: Record<string, [Stats, Stats]>;
}

export interface Figure {
  /** `<scenario>@<connections>`: what --compare matches runs by. */
  readonly id: string;
  readonly scenario: string;
  readonly title: string;
  readonly connections: number;
  readonly service: Stats;
  /** Relative spread of the service's figure between the halves of its runs (p50 and req/s). */
  readonly noise: { readonly p50: number; readonly rps: number };
  /** What ratios compare: p50 for one client (lower is better), req/s for 16 connections (higher is better). */
  readonly by: 'p50' | 'rps';
  readonly ceilings: Record<string, Stats>;
  /** Service ÷ each ceiling, by `by`. */
  readonly ratios: Record<string, number>;
  /**
   * The ceiling --compare judges this figure by: bare where there is one (timed in
   * the same rounds as the service), else the only one. Null when none was.
   */
  readonly judgedBy: string | null;
  /** Relative spread of the service ÷ judgedBy ratio between the halves of the rounds. */
  readonly ratioNoise: number;
}

export interface Timing {
  /** Rounds (even: each half is a noise sample). */
  readonly rounds: number;
  /** Seconds of each timed run (a split workload's share ends when it is all answered). */
  readonly seconds: number;
  /** Requests a side sent by undici before the rounds, each answer checked. */
  readonly warmup: number;
}

/** Times every group at `connections`. */
export async function rounds(
  groups: readonly Group[],
  connections: number,
  timing: Timing,
  onRun?: (text: string) => void,
): Promise<Timed[]> {
  const names = (g: Group) => [...Object.keys(g.ceilings), 'service'];
  const sideOf = (g: Group, name: string) => (name === 'service' ? g.service : g.ceilings[name]!);
  const runs = groups.map((g) => new Map(names(g).map((n) => [n, [] as Run[]])));
  const run = (group: Group, side: Side, k: number) => {
    if ('local' in side) return side.local(connections, timing.seconds);
    if (!group.split) return wrk(side.url, side.requests, connections, { seconds: timing.seconds, serverPid: side.pid });
    const share = Math.ceil(side.requests.length / timing.rounds);
    return wrk(side.url, side.requests.slice(k * share, (k + 1) * share), connections, { seconds: 60, once: true, serverPid: side.pid });
  };
  // A split workload is not warmed up: its requests must meet the cache first when timed.
  for (const group of groups.filter((g) => !g.split)) {
    for (const name of names(group)) {
      const side = sideOf(group, name);
      if ('local' in side) await side.local(connections, LOCAL_WARMUP_SECONDS);
      else await load(side.url, side.requests, connections, timing.warmup);
    }
  }
  for (let k = 0; k < timing.rounds; k++) {
    for (const [i, group] of groups.entries()) {
      onRun?.(`round ${k + 1}/${timing.rounds}, ${i + 1}/${groups.length}`);
      const order = k % 2 === 0 ? names(group) : names(group).reverse();
      for (const name of order) runs[i]!.get(name)!.push(await run(group, sideOf(group, name), k));
    }
  }
  // Every answer once more, byte for byte, now that the timed load is over.
  for (const group of groups) {
    for (const name of names(group)) {
      const side = sideOf(group, name);
      if (!('local' in side)) await load(side.url, side.requests, 1, side.requests.length);
    }
  }
  const half = timing.rounds / 2;
  const halves = (list: Run[]): [Stats, Stats] => [summarizeRuns(list.slice(0, half)), summarizeRuns(list.slice(half))];
  return runs.map((r) => {
    const ceilings = [...r].filter(([name]) => name !== 'service');
    return {
      ceilings: Object.fromEntries(ceilings.map(([name, list]) => [name, summarizeRuns(list)])),
      service: summarizeRuns(r.get('service')!),
      halves: halves(r.get('service')!),
      ceilingHalves: Object.fromEntries(ceilings.map(([name, list]) => [name, halves(list)])),
    };
  });
}

export function figure(
  scenario: string,
  title: string,
  connections: number,
  service: Stats,
  halves: [Stats, Stats],
  ceilings: Record<string, Stats>,
  ceilingHalves: Record<string, [Stats, Stats]> = {},
): Figure {
  const by = connections === 1 ? 'p50' : 'rps';
  const timedBeside = Object.keys(ceilingHalves);
  const judgedBy = timedBeside.includes('bare') ? 'bare' : (timedBeside[0] ?? null);
  const ratioOf = (k: 0 | 1) => halves[k][by] / ceilingHalves[judgedBy!]![k][by];
  return {
    id: `${scenario}@${connections}`,
    scenario,
    title,
    connections,
    service,
    noise: { p50: spread(halves[0].p50, halves[1].p50), rps: spread(halves[0].rps, halves[1].rps) },
    by,
    ceilings,
    ratios: Object.fromEntries(Object.entries(ceilings).map(([name, c]) => [name, service[by] / c[by]])),
    judgedBy,
    ratioNoise: judgedBy === null ? NaN : spread(ratioOf(0), ratioOf(1)),
  };
}
