import type { Figure } from '../runner/measure.ts';
import { capture, type Scenario, scenario } from './suite.ts';

// The derived measures' scenarios: README's five derived-measure examples, each beside the plain
// aggregate with the same group_by and filters, so a figure reads as "derived over
// plain" (target: p50 ≤ 2× at 1 client, uncached), and each again as a cached hit.

export interface DerivedExample {
  readonly id: string;
  readonly title: string;
  readonly path: string;
  /** The plain aggregate with the same group_by and filters. */
  readonly plain: string;
}

const AGGREGATE = '/v1/aggregate?metric=ggr';

export const DERIVED_EXAMPLES: readonly DerivedExample[] = [
  {
    id: 'derived-yoy',
    title: 'YoY growth of online GGR by region, 2020-2024',
    path: `${AGGREGATE}&group_by=region,year&fx=USD&channel=Online&period=2020-01-01:2024-12-31&compare=previous_year`,
    plain: `${AGGREGATE}&group_by=region,year&fx=USD&channel=Online&period=2020-01-01:2024-12-31`,
  },
  {
    id: 'derived-share',
    title: 'online share of GGR by country, top 10',
    path: `${AGGREGATE}&group_by=country,channel&fx=USD&year=2024&channel=Online&share=channel&order=-ggr_sum_share&limit=10`,
    plain: `${AGGREGATE}&group_by=country,channel&fx=USD&year=2024&channel=Online&order=-ggr_sum&limit=10`,
  },
  {
    id: 'derived-per-adult',
    title: 'GGR per adult by country in 2024, top 10',
    path: `${AGGREGATE}&group_by=country&fx=USD&year=2024&per=adult_population&order=-ggr_sum_per_adult_population&limit=10`,
    plain: `${AGGREGATE}&group_by=country&fx=USD&year=2024&order=-ggr_sum&limit=10`,
  },
  {
    id: 'derived-gdp',
    title: 'GGR as a share of GDP by region',
    path: `${AGGREGATE}&group_by=region&fx=USD&year=2024&per=gdp_usd`,
    plain: `${AGGREGATE}&group_by=region&fx=USD&year=2024`,
  },
  {
    id: 'derived-hold',
    title: 'hold by product',
    path: `${AGGREGATE}&group_by=product&fx=USD&year=2024&per=turnover`,
    plain: `${AGGREGATE}&group_by=product&fx=USD&year=2024`,
  },
];

const hasDerived = (answer: { body: Buffer }) =>
  (JSON.parse(answer.body.toString()) as { meta: { measures: string[] } }).meta.measures.length > 1
    ? undefined
    : 'no derived key in meta.measures';

/** On a server with the cache off: each example (`<id>`) and its plain aggregate (`<id>-plain`). */
export async function derivedScenarios(url: string, key: Record<string, string>): Promise<Scenario[]> {
  const out: Scenario[] = [];
  for (const e of DERIVED_EXAMPLES) {
    out.push(scenario(e.id, `uncached ${e.title}`, e.path, {}, await capture(url, e.path, key, 200, hasDerived)));
    out.push(scenario(`${e.id}-plain`, `uncached plain aggregate of ${e.title}`, e.plain, {}, await capture(url, e.plain, key, 200)));
  }
  return out;
}

/** On a server with the defaults: each example again, a cached hit after the first request. */
export async function derivedHits(url: string, key: Record<string, string>): Promise<Scenario[]> {
  const out: Scenario[] = [];
  for (const e of DERIVED_EXAMPLES) {
    const first = await capture(url, e.path, key, 200, hasDerived);
    const hit = await capture(url, e.path, key, 200, (a) =>
      a.body.equals(first.body) ? undefined : 'a hit differs from the first answer',
    );
    out.push(scenario(`cached-${e.id}`, `cached ${e.title}`, e.path, {}, hit));
  }
  return out;
}

/** On the 16x release's server (cache off, no kept results): each example (`x16-<id>`), beside its 1x figure. */
export async function derivedAtScale(url: string, key: Record<string, string>): Promise<Scenario[]> {
  const out: Scenario[] = [];
  for (const e of DERIVED_EXAMPLES)
    out.push(scenario(`x16-${e.id}`, `uncached ${e.title}, 16x release`, e.path, {}, await capture(url, e.path, key, 200, hasDerived)));
  return out;
}

type AtMost = (id: string, text: string, value: number | undefined, limit: number, tol?: number, skipped?: string) => void;

/**
 * The derived measures' targets: each example's uncached p50 at most twice its plain aggregate's
 * (1 client), and on the 16x release at most three times its 1x figure (full runs).
 */
export function derivedTargets(get: (id: string) => Figure | undefined, atMost: AtMost, scaleSkipped?: string): void {
  for (const e of DERIVED_EXAMPLES) {
    const [derived, plain, x16] = [get(`${e.id}@1`), get(`${e.id}-plain@1`), get(`x16-${e.id}@1`)];
    atMost(
      `${e.id}-vs-plain`,
      `${e.title}, uncached, 1 client: p50 ≤ 2× the plain aggregate's`,
      derived && plain && derived.service.p50 / plain.service.p50,
      2,
    );
    atMost(
      `x16-${e.id}`,
      `16× release: ${e.title}, uncached, 1 client: p50 ≤ 3× the 1× figure`,
      x16 && derived && x16.service.p50 / derived.service.p50,
      3,
      undefined,
      scaleSkipped,
    );
  }
}
