import type { Figure } from '../runner/measure.ts';
import { capture, type Scenario, scenario } from './suite.ts';

// The time series' scenarios: README's four examples (index, cagr, latest,
// wide), each beside the plain aggregate with the same group_by and filters, uncached,
// on the 1× release and again on the 16× one. Target: each one's p50 at most twice its
// plain aggregate's at 1 client, at either scale: the extra work (a base year read,
// two more year scans, a pass over the groups) must stay small beside the grouping.

export interface SeriesExample {
  readonly id: string;
  readonly title: string;
  readonly path: string;
  /** The plain aggregate with the same group_by and filters. */
  readonly plain: string;
  /** The key the answer must carry, so a figure never times a refusal or a plain answer. */
  readonly key: RegExp;
}

const AGGREGATE = '/v1/aggregate?metric=ggr';
const ONLINE = 'group_by=region,year&fx=USD&channel=Online&period=2020-01-01:2024-12-31';
const WIDE = 'group_by=region,year&fx=USD&period=2019-01-01:2024-12-31';

export const SERIES_EXAMPLES: readonly SeriesExample[] = [
  {
    id: 'series-index',
    title: 'online GGR by region indexed to 2019',
    path: `${AGGREGATE}&${ONLINE}&index=2019`,
    plain: `${AGGREGATE}&${ONLINE}`,
    key: /^ggr_sum_index$/,
  },
  {
    id: 'series-cagr',
    title: 'CAGR 2015-2024 by country, fastest 10',
    path: `${AGGREGATE}&group_by=country&fx=USD&cagr=2015:2024&order=-ggr_sum_cagr&limit=10`,
    plain: `${AGGREGATE}&group_by=country&fx=USD&order=-ggr_sum&limit=10`,
    key: /^ggr_sum_cagr$/,
  },
  {
    id: 'series-latest',
    title: 'the latest reported year of each country',
    path: `${AGGREGATE}&group_by=country,year&fx=USD&temporal=Current&latest=1`,
    plain: `${AGGREGATE}&group_by=country,year&fx=USD&temporal=Current`,
    key: /^ggr_sum$/,
  },
  {
    id: 'series-wide',
    title: 'GGR by region with years as columns, 2019-2024',
    path: `${AGGREGATE}&${WIDE}&shape=wide`,
    plain: `${AGGREGATE}&${WIDE}`,
    key: /^ggr_sum_2024$/,
  },
];

const carries = (key: RegExp) => (answer: { body: Buffer }) =>
  (JSON.parse(answer.body.toString()) as { meta: { measures: string[] } }).meta.measures.some((k) => key.test(k))
    ? undefined
    : `no key matching ${key} in meta.measures`;

/** On a server with the cache off: each example (`<prefix><id>`) and its plain aggregate (`<prefix><id>-plain`). */
export async function seriesScenarios(url: string, key: Record<string, string>, prefix = '', scale = ''): Promise<Scenario[]> {
  const out: Scenario[] = [];
  for (const e of SERIES_EXAMPLES) {
    out.push(scenario(`${prefix}${e.id}`, `uncached ${e.title}${scale}`, e.path, {}, await capture(url, e.path, key, 200, carries(e.key))));
    out.push(
      scenario(
        `${prefix}${e.id}-plain`,
        `uncached plain aggregate of ${e.title}${scale}`,
        e.plain,
        {},
        await capture(url, e.plain, key, 200),
      ),
    );
  }
  return out;
}

/** On the 16x release's server (cache off, no kept results): each example and its plain aggregate again (`x16-<id>`, `x16-<id>-plain`). */
export const seriesAtScale = (url: string, key: Record<string, string>) => seriesScenarios(url, key, 'x16-', ', 16x release');

type AtMost = (id: string, text: string, value: number | undefined, limit: number, tol?: number, skipped?: string) => void;

/** Each example's uncached p50 at most twice its plain aggregate's, 1 client, on the 1× release and on the 16× one (full runs). */
export function seriesTargets(get: (id: string) => Figure | undefined, atMost: AtMost, scaleSkipped?: string): void {
  for (const e of SERIES_EXAMPLES) {
    for (const [prefix, scale, skipped] of [
      ['', '', undefined],
      ['x16-', '16× release: ', scaleSkipped],
    ] as const) {
      const [series, plain] = [get(`${prefix}${e.id}@1`), get(`${prefix}${e.id}-plain@1`)];
      atMost(
        `${prefix}${e.id}-vs-plain`,
        `${scale}${e.title}, uncached, 1 client: p50 ≤ 2× the plain aggregate's`,
        series && plain && series.service.p50 / plain.service.p50,
        2,
        undefined,
        skipped,
      );
    }
  }
}
