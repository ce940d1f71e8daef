import * as v from 'valibot';
import {
  type ApiError,
  CompareNeedsYearError,
  DerivedNeedsSumError,
  InvalidHavingError,
  InvalidParametersError,
  InvalidPerError,
  InvalidShareError,
  MixedUnitsError,
  RollupConflictError,
} from '../../errors/index.ts';
import {
  type DatasetDef,
  DENOMINATOR_NAMES,
  DENOMINATORS,
  type DenominatorDef,
  type DenominatorName,
  denominatorKeys,
  metricDef,
} from '../../registry.ts';
import type { Filters } from '../filters.ts';
import { type AggregateFunction, type AggregateOption, sumsOnly } from './aggregate-option.ts';
import { repeatable, single } from './params.ts';

// The derived measures of /v1/aggregate (docs/api.md "Derived measures"): each sum
// against the year before (`compare`), as a share of its total (`share`), divided by
// another dataset's metric (`per`), and the groups kept by a condition (`having`).
// Their values are query/column-kinds.ts's.

const COMPARES = ['previous_year'] as const;

/** PostgREST's words. */
const HAVING_OPS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte'] as const;
export type HavingOp = (typeof HAVING_OPS)[number];

/** One `having=<key>.<op>.<number>` condition, as sent and as parsed. */
export interface Having {
  readonly text: string;
  readonly key: string;
  readonly op: HavingOp;
  readonly value: number;
}

export const compare = {
  schema: v.optional(single(v.picklist(COMPARES, `Expected ${COMPARES.join(' or ')}`))),
  description:
    '`previous_year` adds, for each measure key `k`, `k_prev`, `k_change` (this minus prev) and `k_pct_change` (`this ÷ prev − 1`, a fraction: 0.05 is 5% growth), set against the same group one year earlier, found by year and read even when `year` or `period` filters it out. Null where that group does not exist; `k_pct_change` null where `k_prev` is 0. Needs `year` in group_by. Given once.',
  examples: [
    { value: 'previous_year', request: '/v1/aggregate?metric=country&group_by=region,year&measure=gdp_usd:sum&compare=previous_year' },
  ],
  errors: {
    badCompare: new InvalidParametersError({ compare: [`Expected ${COMPARES.join(' or ')}`] }),
    compareNeedsYear: new CompareNeedsYearError(),
  },
  key: (c) => c,
  needs: (_, request) => (request.groupBy.includes('year') ? undefined : new CompareNeedsYearError()),
  columns: { kinds: ['prev', 'change', 'pct_change'] },
  meta: (c) => ({ compare: c }),
  metaSchema: { compare: { enum: [...COMPARES], description: 'The comparison applied.' } },
} satisfies AggregateOption<(typeof COMPARES)[number] | undefined>;

export const share = {
  schema: v.optional(single(v.pipe(v.string(), v.minLength(1, 'Expected all or a group_by dimension')))),
  description:
    "`all` or a group_by dimension: adds `k_share` to each sum measure, its fraction of the total over every value of that dimension with the other group_by dimensions fixed (the dimension's own filter does not narrow the total), or of the grand total with `all`. Not with rollup. Given once.",
  examples: [
    { value: 'all' },
    { value: 'region', request: '/v1/aggregate?metric=country&group_by=region,year&measure=gdp_usd:sum&share=region' },
  ],
  errors: {
    invalidShare: new InvalidShareError('product', ['country', 'channel']),
    shareOfAvg: new DerivedNeedsSumError('share', 'ggr:avg'),
    rollupShare: new RollupConflictError('share'),
  },
  key: (s) => s,
  values: (def) => [...def.dimensions, 'all'],
  client: 'dimension-or-all',
  needs: (s, request) => {
    if (request.rollup) return new RollupConflictError('share');
    return s === 'all' || request.groupBy.includes(s) ? undefined : new InvalidShareError(s, request.groupBy);
  },
  columns: { kinds: ['share'], refusal: sumsOnly('share') },
  meta: (s) => ({ share: s }),
  metaSchema: { share: { type: 'string', description: 'The share applied: `all` or a group_by dimension.' } },
} satisfies AggregateOption<string | undefined>;

/** The denominators that may divide `def`'s sums. */
export const denominatorsOf = (def: DatasetDef): DenominatorName[] =>
  DENOMINATOR_NAMES.filter((name) => (DENOMINATORS[name].numerators as readonly string[]).includes(def.name));

/** A denominator as the catalog, OpenAPI, the CLI and `meta.per` describe it. */
export interface DenominatorEntry {
  readonly metric: DenominatorName;
  readonly dataset: string;
  readonly keys: readonly string[];
  readonly numerator_unit?: string;
  readonly means: string;
}

/** Denominator `metric` dividing `def`'s sums, as the registry defines it. */
export function denominatorEntry(def: DatasetDef, metric: DenominatorName): DenominatorEntry {
  const denominator: DenominatorDef = DENOMINATORS[metric];
  const { dataset, means, numeratorUnit } = denominator;
  return { metric, dataset, keys: denominatorKeys(denominator, def), ...(numeratorUnit && { numerator_unit: numeratorUnit }), means };
}

/** Whether `metric`'s values are in `unit` for these filters: by its own unit, or a currency dimension fixed to it. */
function inUnit(metric: string, unit: string, filters: Filters): boolean {
  const def = metricDef(metric);
  if (def.unit === unit) return true;
  const from = def.unitFrom;
  return (
    from !== undefined && from.one === 'currency' && filters.get(from.dimension)?.length === 1 && filters.get(from.dimension)![0] === unit
  );
}

/** Why `<metric>:<fn>` cannot be divided `per`, or undefined: ratios are of sums, in the unit the denominator asks for. */
function perRefusal(metric: string, fn: string, per: DenominatorName, filters: Filters): ApiError | undefined {
  const notSum = sumsOnly('per')(undefined, { metric, fn: fn as AggregateFunction });
  if (notSum) return notSum;
  const unit = (DENOMINATORS[per] as DenominatorDef).numeratorUnit;
  if (unit === undefined || inUnit(metric, unit, filters)) return undefined;
  const from = metricDef(metric).unitFrom;
  return new MixedUnitsError(
    from?.one === 'currency'
      ? `Cannot divide ${metric} per ${per}, which is in ${unit}, unless ${metric} is in ${unit} too: filter ${from.dimension} to ${unit} (${from.dimension}=${unit})`
      : `Cannot divide ${metric} per ${per}: ${metric} is in ${metricDef(metric).unit}, not ${unit}; measure a metric in ${unit}`,
  );
}

/** The keys of `per`'s answer a denominator lacks, as `meta.unmatched` says them. */
const unmatched = {
  type: 'object',
  additionalProperties: false,
  required: ['count', 'keys'],
  description:
    "With `per`: the keys of the groups' rows that have no denominator row (those groups' ratios are null), counted, and the first ten by value.",
  properties: {
    count: { type: 'integer', minimum: 0 },
    keys: { type: 'array', maxItems: 10, items: { type: 'object', additionalProperties: { type: ['string', 'integer'] } } },
  },
};

const joinedOn = (d: DenominatorDef) => (d.keys === 'shared' ? 'every dimension the two datasets share, fx included' : d.keys.join(', '));

export const per = {
  schema: v.optional(single(v.picklist(DENOMINATOR_NAMES, `Expected one of ${DENOMINATOR_NAMES.join(', ')}`))),
  description: `Divides each sum measure by another dataset's metric summed over exactly the keys of the group's rows, as \`k_per_<metric>\`; null where a key has no denominator row (counted in \`meta.unmatched\`). ${DENOMINATOR_NAMES.map(
    (name) => {
      const d: DenominatorDef = DENOMINATORS[name];
      return `\`${name}\` (from ${d.dataset}, joined on ${joinedOn(d)}; for ${d.numerators.join(', ')}${d.numeratorUnit ? `; the numerator in ${d.numeratorUnit}` : ''}): ${d.means}`;
    },
  ).join('; ')}. Given once.`,
  examples: [{ value: 'adult_population' }, { value: 'gdp_usd' }],
  errors: {
    badPer: new InvalidParametersError({ per: [`Expected one of ${DENOMINATOR_NAMES.join(', ')}`] }),
    invalidPer: new InvalidPerError('turnover', 'country', ['adult_population', 'gdp_usd']),
    perNeedsUsd: perRefusal('ggr', 'sum', 'gdp_usd', new Map([['fx', ['EUR']]]))!,
  },
  key: (p) => p,
  values: denominatorsOf,
  client: 'denominator',
  needs: (p, request) => {
    const allowed = denominatorsOf(request.def);
    return allowed.includes(p) ? undefined : new InvalidPerError(p, request.def.name, allowed);
  },
  columns: { kinds: ['per'], refusal: (p, m, filters) => perRefusal(m.metric, m.fn, p, filters) },
  meta: (p, { def, result }) => {
    const { metric, dataset, keys } = denominatorEntry(def, p);
    return { per: { metric, dataset, keys }, ...(result.unmatched !== undefined && { unmatched: result.unmatched }) };
  },
  metaSchema: {
    per: {
      type: 'object',
      additionalProperties: false,
      required: ['metric', 'dataset', 'keys'],
      description: 'The denominator applied: its metric, the dataset holding it and the keys a row is matched on.',
      properties: {
        metric: { enum: [...DENOMINATOR_NAMES] },
        dataset: { type: 'string' },
        keys: { type: 'array', items: { type: 'string' } },
      },
    },
    unmatched,
  },
} satisfies AggregateOption<DenominatorName | undefined>;

const HAVING = new RegExp(`^([A-Za-z0-9_]+)\\.(${HAVING_OPS.join('|')})\\.(-?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][-+]?\\d+)?)$`);

const HAVING_FORMAT = `Expected <key>.<op>.<number> with op one of ${HAVING_OPS.join(', ')}, e.g. ggr_sum.gt.1e9`;

/** `having=<key>.<op>.<number>` (PostgREST's operator words), repeatable: the form is checked here, the key by the plan. */
export const having = {
  schema: v.optional(
    v.pipe(
      repeatable(v.pipe(v.string(), v.regex(HAVING, HAVING_FORMAT))),
      v.transform((texts) =>
        // Distinct conditions, in the order first sent: all must hold.
        [...new Set(texts)].map((text): Having => {
          const [, key, op, number] = HAVING.exec(text)!;
          return { text, key: key!, op: op as HavingOp, value: Number(number) };
        }),
      ),
      v.check((conditions) => conditions.every((h) => Number.isFinite(h.value)), 'Expected a number within the range of a double'),
    ),
    [],
  ),
  description: `\`<key>.<op>.<number>\`, op one of ${HAVING_OPS.join(', ')}; repeat for several, all must hold. Keeps the groups whose value passes, after derived measures and before order and paging; null never passes. The key is a measure key of the answer, derived ones included, or \`rows\`. Not with rollup.`,
  examples: [{ value: ['gdp_usd_sum.gt.1e12'] }, { value: ['rows.gt.100'] }],
  errors: {
    badHaving: new InvalidParametersError({ having: [HAVING_FORMAT] }),
    invalidHaving: new InvalidHavingError('revenue.gt.1e9', ['ggr_sum', 'ggr_sum_share', 'rows']),
    rollupHaving: new RollupConflictError('having'),
  },
  key: (conditions) => conditions.map((h) => h.text),
  client: 'having',
  needs: (_, request) => (request.rollup ? new RollupConflictError('having') : undefined),
  meta: (conditions) => ({ having: conditions.map((h) => h.text) }),
  metaSchema: { having: { type: 'array', items: { type: 'string' }, description: 'The having conditions applied, as sent.' } },
} satisfies AggregateOption<Having[]>;
