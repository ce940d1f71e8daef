import { FINANCIAL_DATASETS, metricDef } from '../../registry.ts';
import { PAGE_FORMATS } from '../../render/formats.ts';
import type { AggregateOption } from './aggregate-option.ts';
import { compare, having, per, share } from './derived.ts';
import type { Endpoint } from './endpoint.ts';
import { groupBy, measure, order, rollup } from './grouping.ts';
import type { ValuesOf } from './option.ts';
import { SERIES_OPTIONS } from './series.ts';
import { asOf, cursor, formatOption, limitOption, metricOption, period, release } from './shared.ts';

// GET /v1/aggregate's options, in the order the document lists them and the plan
// checks them (query/aggregate-plan.ts).

/** A request on `metric` that aggregates as it is: by country, with each currency-bound metric in one currency. */
function requestFor(metric: string): string {
  const def = FINANCIAL_DATASETS.find((d) => d.name === metric)!;
  const units = [...new Set(def.metrics.flatMap((m) => metricDef(m).unitFrom?.dimension ?? []))].filter((d) => d !== 'country');
  return `/v1/aggregate?metric=${metric}&group_by=country${units.map((d) => `&${d}=USD`).join('')}`;
}

const OPTIONS = {
  metric: metricOption(
    [{ value: 'country' }, { value: 'fx', request: '/v1/aggregate?metric=fx&group_by=region' }],
    'aggregate',
    'Its example, country, aggregates with no other parameter; ggr and turnover alone would add up amounts in different units, which is refused unless a filter or a grouping keeps one unit.',
  ),
  period,
  limit: limitOption(
    1000,
    'Groups per page, given once. Without it, JSON pages by 1000 and **CSV and Arrow answer every group** (at most AGGREGATE_MAX_GROUPS; more is the `tooManyGroups` 400), so `pandas.read_csv` or R reads the whole result from one URL; with it, every format pages.',
  ),
  cursor,
  format: formatOption(PAGE_FORMATS, ['csv', 'arrow']),
  release,
  as_of: asOf,
  group_by: groupBy,
  measure,
  order,
  rollup,
  compare,
  share,
  per,
  having,
  ...SERIES_OPTIONS,
};

export const AGGREGATE = {
  path: '/v1/aggregate',
  options: OPTIONS,
  others: 'filters',
  // Swagger UI fills in its parameters, and a generated request sends `metric` alone: the metric's example works alone.
  example: '/v1/aggregate?metric=country&group_by=region&measure=gdp_usd:sum',
  requestFor,
} as const satisfies Endpoint;

/** An aggregate request's options, as parsed. */
export type AggregateValues = ValuesOf<typeof OPTIONS>;

/** Every option as the plan reads it: each one's checks, columns and `meta`, where it has them. */
// biome-ignore lint/suspicious/noExplicitAny: options of every value type, each called with its own value
export const PLANNED: Readonly<Record<string, AggregateOption<any>>> = OPTIONS;
