import * as v from 'valibot';
import { InvalidGroupByError, InvalidMeasureError, InvalidOrderError, MixedUnitsError, RateSumError } from '../../errors/index.ts';
import { FINANCIAL_DATASETS } from '../../registry.ts';
import { type AggregateOption, FUNCTIONS } from './aggregate-option.ts';
import { repeatable, single } from './params.ts';

// How /v1/aggregate groups, measures and orders (docs/api.md "Aggregates"). The plan
// (query/aggregate-plan.ts) checks the names against the dataset and the registry's guards.

export const MAX_GROUP_BY = 6;

const fx = FINANCIAL_DATASETS.find((d) => d.name === 'fx')!;
const oneOf = (names: readonly string[]) => `(?:${names.join('|')})`;

export const groupBy = {
  schema: v.optional(
    v.pipe(
      // Repeated (`group_by=region&group_by=year`) or comma-separated (`group_by=region,year`).
      repeatable(v.string()),
      v.transform((values) => values.flatMap((value) => value.split(','))),
      v.check((names) => names.every((name) => name !== ''), 'Expected dimension names, without empty ones'),
      v.check((names) => new Set(names).size === names.length, 'Each dimension may be grouped by once'),
      v.check((names) => names.length <= MAX_GROUP_BY, `At most ${MAX_GROUP_BY} dimensions`),
    ),
    [],
  ),
  description: `Dimensions to group by, repeated or comma-separated, at most ${MAX_GROUP_BY}: their order is the column order and the default sort order.`,
  examples: [{ value: ['region'] }, { value: ['year'] }],
  errors: { invalidGroupBy: new InvalidGroupByError('product', 'fx', fx.dimensions) },
  key: (names) => names,
  values: (def) => def.dimensions,
  // One name per value, or several comma-separated in one.
  openapi: (names) => ({ anyOf: [{ enum: names }, { pattern: `^${oneOf(names)}(?:,${oneOf(names)})+$` }] }),
  client: 'dimensions',
  explore: 'first',
} satisfies AggregateOption<string[]>;

export const measure = {
  schema: v.optional(repeatable(v.pipe(v.string(), v.minLength(1, 'Expected <metric> or <metric>:<fn>')))),
  description: `\`<metric>:<fn>\` with fn one of ${FUNCTIONS.join(', ')}, or \`<metric>\` for its default (sum, or avg for a rate); repeat for several. Without it: every metric of the dataset with its default, less those that cannot be combined here (named in \`meta.omitted\`).`,
  examples: [{ value: ['gdp_usd:sum'] }, { value: ['adult_population'] }],
  errors: {
    invalidMeasure: new InvalidMeasureError('ggr:median', 'ggr', ['ggr']),
    mixedCurrencies: new MixedUnitsError(
      'Cannot combine ggr values in different currencies: filter fx to one currency or add fx to group_by',
    ),
    rateSum: new RateSumError('Cannot sum inflation, a rate: use avg, min or max'),
  },
  key: (measures) => measures,
  values: (def) => def.metrics.flatMap((m) => [m, ...FUNCTIONS.map((fn) => `${m}:${fn}`)]),
  client: 'measures',
  explore: 'first',
} satisfies AggregateOption<string[] | undefined>;

/** `order`: a key and a direction. */
export interface Order {
  readonly text: string;
  readonly key: string;
  readonly descending: boolean;
}

export const order = {
  schema: v.optional(
    single(
      v.pipe(
        v.string(),
        v.minLength(1, 'Expected a group_by dimension or a measure key'),
        v.transform((text): Order => ({ text, key: text.replace(/^-/, ''), descending: text.startsWith('-') })),
      ),
    ),
  ),
  description:
    'A group_by dimension, a measure key (`ggr_sum`, derived ones included: `ggr_sum_share`) or `rows`; a leading `-` sorts descending; nulls come last either way. Ties, and the default, follow the group_by values in order. Given once.',
  examples: [{ value: '-gdp_usd_sum' }, { value: 'region' }],
  errors: { invalidOrder: new InvalidOrderError('-revenue', ['region', 'ggr_sum', 'rows']) },
  key: (o) => o.text,
  client: 'text',
} satisfies AggregateOption<Order | undefined>;

export const rollup = {
  schema: v.pipe(
    v.optional(single(v.picklist(['true', 'false'], 'Expected true or false')), 'false'),
    v.transform((text) => text === 'true'),
  ),
  description:
    '`true` adds subtotal rows (GROUP BY ROLLUP over group_by, in order) and a grand total; a rolled-up dimension is null. Given once.',
  examples: [{ value: 'true' }, { value: 'false' }],
  key: (on) => on,
  client: 'flag',
} satisfies AggregateOption<boolean>;
