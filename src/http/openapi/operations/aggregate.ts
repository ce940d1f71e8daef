import { MixedTotalsError, TooManyGroupsError } from '../../../errors/index.ts';
import { defaultFunction } from '../../../query/aggregate-plan.ts';
import { PLANNED } from '../../../query/options/aggregate.ts';
import { type Endpoint, optionErrors } from '../../../query/options/endpoint.ts';
import { MAX_GROUP_BY } from '../../../query/options/grouping.ts';
import { DENOMINATOR_NAMES, DENOMINATORS, type DenominatorDef, FINANCIAL_DATASETS, metricDef } from '../../../registry.ts';
import { asOfMeta, envelope, releaseId, warnings } from '../components.ts';
import { keyedErrors, pageResponses, ref, releaseResponses } from '../responses.ts';

// GET /v1/aggregate in the document: what it answers, its errors beyond its options',
// and its response schemas, whose `meta` takes each option's own fields.

/** Each metric's kind, unit, default function and what combining it needs (the registry's METRICS); docs/api.md holds it too. */
export function metricsTable(): string {
  const rows = FINANCIAL_DATASETS.flatMap((d) =>
    d.metrics.map((m) => {
      const def = metricDef(m);
      const needs = [def.kind === 'rate' ? 'no sum (a rate)' : '', def.unitFrom ? `one ${def.unitFrom.dimension}, filtered or grouped` : '']
        .filter(Boolean)
        .join('; ');
      return `| ${m} | ${d.name} | ${def.kind} | ${def.unit} | ${defaultFunction(m)} | ${needs || '—'} |`;
    }),
  );
  return ['| metric | dataset | kind | unit | default | to combine rows |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

const joinedOn = (d: DenominatorDef) => (d.keys === 'shared' ? 'every dimension the two datasets share, fx included' : d.keys.join(', '));

/** Each denominator `per` takes, as docs/api.md tabulates it (from the registry's DENOMINATORS). */
export function denominatorsTable(): string {
  const rows = DENOMINATOR_NAMES.map((name) => {
    const d: DenominatorDef = DENOMINATORS[name];
    return `| ${name} | ${d.dataset} | ${joinedOn(d)} | ${d.numerators.join(', ')} | ${d.numeratorUnit ?? 'any'} | ${d.means} |`;
  });
  return ['| per | from | joined on | divides | numerator in | the ratio is |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

export const aggregateOperation = (endpoint: Endpoint) => ({
  operationId: 'getAggregate',
  tags: ['data'],
  summary: 'Totals, averages, minima and maxima of a financial dataset, grouped',
  description: `Groups the rows of one financial dataset that pass the filters by up to ${MAX_GROUP_BY} dimensions and computes each measure per group: sums are the exact decimal sums of the values as published, averages divide that sum by \`rows\`. Takes every filter of /v1/financials. What each metric may be combined with:\n\n${metricsTable()}\n\nWithout a filter or a grouping on \`state\`, only national rows (\`state\` "") are read, since a country's national row already totals its states' rows. CSV and Arrow without \`limit\` are every group in one answer; JSON pages.`,
  responses: {
    ...pageResponses(
      'AggregateResponse',
      {
        csv: 'RFC 4180 CSV with a header row: the group_by dimensions, the measure keys, then `rows`; a rolled-up dimension is an empty field (an empty string value is `""`). Without `limit`: every group.',
        arrow:
          'Arrow IPC stream: text dimensions Utf8, `year` Int32, measures Float64, `rows` Int32; a rolled-up dimension is null. Without `limit`: every group, a record batch per 4,096, every field nullable.',
      },
      { description: 'CSV and Arrow without `limit`: every group of the result in one answer, with no `Link`.' },
    ),
    ...keyedErrors({
      ...optionErrors(endpoint),
      mixedTotals: new MixedTotalsError(
        'Cannot add national totals (state "") to the rows they total: filter state to "" alone or leave "" out, or add state to group_by',
      ),
      tooManyGroups: new TooManyGroupsError(250_000, 100_000),
    }),
    ...releaseResponses(),
  },
});

export const AGGREGATE_SCHEMAS = {
  AggregateRow: {
    type: 'object',
    additionalProperties: false,
    required: ['dimensions', 'values'],
    properties: {
      dimensions: {
        type: 'object',
        description:
          "The group: each group_by dimension's value; null where a rollup row totals that dimension. With `shape=wide`, every group_by dimension but `year`.",
        additionalProperties: { type: ['string', 'integer', 'null'] },
      },
      values: {
        type: 'object',
        description:
          'Each measure as `<metric>_<fn>` and its derived keys (`_prev`, `_change`, `_pct_change`, `_share`, `_per_<metric>`, `_index`, `_from`, `_to`, `_cagr`; every ratio a plain fraction, as /v1/catalog `derived` says), and `rows`: the rows added up. With `shape=wide`, each of those keys per year as `<key>_<year>`, and `rows` over the years. Null for a sum beyond the largest double, and for a derived value that has none.',
        required: ['rows'],
        properties: { rows: { type: 'integer', minimum: 0 } },
        additionalProperties: { type: ['number', 'null'] },
      },
    },
  },
  AggregateResponse: envelope(
    ref('AggregateRow'),
    {
      dataset: { enum: FINANCIAL_DATASETS.map((d) => d.name) },
      metric: { enum: FINANCIAL_DATASETS.map((d) => d.name) },
      group_by: { type: 'array', items: { type: 'string' } },
      measures: {
        type: 'array',
        items: { type: 'string' },
        description: 'Every key of `values` but `rows`, in column order: each measure, then its derived keys.',
      },
      filters_applied: {
        type: 'object',
        additionalProperties: { type: 'array', items: { type: 'string' } },
        description: 'The filters used, including `state: [""]` when only national rows were read.',
      },
      row_count: { type: 'integer', minimum: 0, description: 'Groups in this page.' },
      release: releaseId,
    },
    {
      omitted: {
        type: 'array',
        description: 'Without `measure`: default measures left out because they cannot be combined here, and why.',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['measure', 'reason'],
          properties: { measure: { type: 'string' }, reason: { type: 'string' } },
        },
      },
      ...Object.assign({}, ...Object.values(PLANNED).map((option) => option.metaSchema ?? {})),
      as_of: asOfMeta,
      warnings,
    },
  ),
};
