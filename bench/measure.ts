import { load, spread, summarizeRuns, type Request, type Run, type Stats } from './load.ts';

// How figures are timed: every scenario of a server beside its ceiling, in rounds.
// Each round runs every pair once, ceiling and service in turns (ceiling first in
// even rounds, service first in odd ones), so a burst of other load on this shared
// machine falls on both sides and on every scenario alike, and figures compared with
// each other (late vs first page, Arrow vs JSON) come from the same stretch of time.
// Four rounds; the first two and the last two are the two samples whose spread is
// a figure's noise.

const ROUNDS = 4;

/** Where one side of a comparison sends its requests. */
export interface Side {
  readonly url: string;
  readonly requests: readonly Request[];
}

export interface Pair {
  readonly ceiling: Side;
  readonly service: Side;
  /** The requests are a workload sent once: each round takes the next quarter of it. */
  readonly split?: boolean;
}

export interface Timed {
  readonly ceiling: Stats;
  readonly service: Stats;
  /** The service's first and second half of rounds. */
  readonly halves: [Stats, Stats];
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
}

export interface Counts {
  /** Requests per side and scenario at 1 connection and at 16, over the four rounds. */
  readonly one: number;
  readonly sixteen: number;
}

/**
 * Times every pair at `connections`, `total` requests a side (a split workload: each
 * request once), after `warmup` untimed requests a side so the first scenario after a
 * server starts does not pay for its cold code alone.
 */
export async function rounds(pairs: readonly Pair[], connections: number, total: number, warmup: number, onRun?: (text: string) => void): Promise<Timed[]> {
  const runs = pairs.map(() => ({ ceiling: [] as Run[], service: [] as Run[] }));
  const run = (pair: Pair, side: Side, k: number) => {
    if (!pair.split) return load(side.url, side.requests, connections, Math.ceil(total / ROUNDS));
    const quarter = Math.ceil(side.requests.length / ROUNDS);
    const part = side.requests.slice(k * quarter, (k + 1) * quarter);
    return load(side.url, part, connections, part.length);
  };
  // A split workload is not warmed up: its requests must meet the cache first when timed.
  for (const pair of pairs.filter((p) => !p.split)) {
    for (const side of [pair.ceiling, pair.service]) await load(side.url, side.requests, connections, warmup);
  }
  for (let k = 0; k < ROUNDS; k++) {
    for (const [i, pair] of pairs.entries()) {
      onRun?.(`round ${k + 1}/${ROUNDS}, ${i + 1}/${pairs.length}`);
      const order = k % 2 === 0 ? (['ceiling', 'service'] as const) : (['service', 'ceiling'] as const);
      for (const side of order) runs[i]![side].push(await run(pair, pair[side], k));
    }
  }
  const half = ROUNDS / 2;
  return runs.map((r) => ({
    ceiling: summarizeRuns(r.ceiling),
    service: summarizeRuns(r.service),
    halves: [summarizeRuns(r.service.slice(0, half)), summarizeRuns(r.service.slice(half))],
  }));
}

export function figure(scenario: string, title: string, connections: number, service: Stats, halves: [Stats, Stats], ceilings: Record<string, Stats>): Figure {
  const by = connections === 1 ? 'p50' : 'rps';
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
  };
}
