import { alternate, load, spread, type Request, type Stats } from './load.ts';

// One figure: a scenario at one connection count, timed in alternated runs beside the
// thing it is compared with (its bare ceiling, or the peer), and what the result
// file keeps of it.

/** Where one side of a comparison sends its requests. */
export interface Side {
  readonly url: string;
  readonly requests: readonly Request[];
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
  /** Requests per side at 1 connection and at 16, each split over four alternated runs. */
  readonly one: number;
  readonly sixteen: number;
}

/**
 * Times `service` beside `ceiling`, alternated (ceiling, service, service, ceiling …).
 * With `split`, the requests are a workload sent once: each run takes the next
 * quarter of it. Otherwise each run cycles through them for a quarter of `total`.
 */
export async function compare(ceiling: Side, service: Side, connections: number, total: number, split: boolean, onRun?: (done: number, of: number) => void) {
  const run = (side: Side) => (k: number) => {
    if (!split) return load(side.url, side.requests, connections, Math.ceil(total / 4));
    const quarter = Math.ceil(side.requests.length / 4);
    const part = side.requests.slice(k * quarter, (k + 1) * quarter);
    return load(side.url, part, connections, part.length);
  };
  return alternate(run(ceiling), run(service), onRun);
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
