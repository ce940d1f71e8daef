import * as v from 'valibot';
import { InvalidParametersError } from '../../errors/index.ts';
import { EXPORT_FORMATS, PAGE_FORMATS } from '../../render/formats.ts';
import { OUTPUTS, SHAPES } from '../history.ts';
import { CHANGES } from '../revisions.ts';
import { AGGREGATE } from './aggregate.ts';
import type { Endpoint } from './endpoint.ts';
import { groupBy } from './grouping.ts';
import type { QueryOption } from './option.ts';
import { releaseParam, repeatable, single } from './params.ts';
import { asOf, cursor, dataset, formatOption, limitOption, metricOption, period, release } from './shared.ts';

// Every data endpoint's options, in the order the document lists them. The hint
// for a parameter one endpoint does not take names the first of these that does
// (filter-values.ts).

export const FINANCIALS = {
  path: '/v1/financials',
  options: {
    metric: metricOption([{ value: 'ggr' }, { value: 'turnover' }]),
    period,
    limit: limitOption(100, undefined, '/v1/financials?metric=ggr&country=France'),
    cursor,
    format: formatOption(PAGE_FORMATS, ['csv', 'arrow']),
    release,
    as_of: asOf,
  },
  others: 'filters',
  example: '/v1/financials?metric=ggr&country=France&year=2024&limit=5',
  requestFor: (metric) => `/v1/financials?metric=${metric}&limit=5`,
} as const satisfies Endpoint;

export const REFERENCE = {
  path: '/v1/reference',
  options: { dataset, limit: limitOption(100), cursor, format: formatOption(PAGE_FORMATS, ['csv', 'arrow']), release, as_of: asOf },
  others: 'refused',
  example: '/v1/reference?dataset=country_reference&limit=3',
} as const satisfies Endpoint;

const from = {
  schema: releaseParam,
  description:
    'The earlier release `YYYY-MM`; by default the one published before `to`, or `to` itself when there is none (an empty page). Given once.',
  examples: [{ value: '2026-11' }, { value: '2026-12' }],
  // As resolved (the route keys the id it read): a default that moves is another diff.
  key: (id) => id,
  explore: 'first',
} satisfies QueryOption<string | undefined>;

const to = {
  schema: releaseParam,
  description: 'The later release `YYYY-MM`; by default the current one. Given once.',
  examples: [{ value: '2026-12' }, { value: '2026-11' }],
  // The scope's release too: as resolved, the current one by default.
  key: (id) => id,
  explore: 'first',
} satisfies QueryOption<string | undefined>;

const change = {
  schema: v.optional(
    v.pipe(
      repeatable(v.picklist(CHANGES, 'Expected added, removed or changed')),
      // In one order, once each: the same kinds asked another way are the same diff.
      v.transform((kinds) => [...new Set(kinds)].sort((a, b) => CHANGES.indexOf(a) - CHANGES.indexOf(b))),
    ),
  ),
  description: `Only rows of these kinds: ${CHANGES.join(', ')}; repeat for several.`,
  examples: [{ value: ['changed'] }, { value: ['added'] }],
  key: (kinds) => kinds,
  explore: 'first',
} satisfies QueryOption<(typeof CHANGES)[number][] | undefined>;

export const REVISIONS = {
  path: '/v1/revisions',
  options: {
    metric: metricOption([{ value: 'ggr' }, { value: 'turnover' }]),
    period,
    limit: limitOption(
      100,
      'Rows per page, given once. Without it, JSON pages by 100 and **CSV and Arrow stream every row of the diff**, charged as one export (the daily export budget, EXPORTS_OPEN_PER_KEY), so `pandas.read_csv` or R reads the whole diff from one URL; with it, every format pages and no export is charged.',
      '/v1/revisions?metric=ggr&from=2026-11&to=2026-12',
    ),
    cursor,
    format: formatOption(PAGE_FORMATS, ['csv', 'arrow']),
    from,
    to,
    change,
  },
  others: 'filters',
  example: '/v1/revisions?metric=ggr&from=2026-11&to=2026-12&country=France&change=changed&limit=5',
  requestFor: (metric) => `/v1/revisions?metric=${metric}&limit=5`,
} as const satisfies Endpoint;

/** The refusal of `shape=wide` with another output than `all`. */
export const wideWithoutAll = new InvalidParametersError({
  shape: ['shape=wide needs output=all: only every value of every release has a column per release'],
});

/** The refusal of a range of more releases than HISTORY_MAX_RELEASES. */
export const tooManyReleases = (max: number, from: string, to: string, count: number) =>
  new InvalidParametersError({
    from: [
      `${count} releases from ${from} to ${to}: at most ${max} (HISTORY_MAX_RELEASES) in one request; ask for a later from, and fetch the rest in another request`,
    ],
  });

/** The refusal of a `from` published after `to`. */
export const fromAfterTo = (from: string, to: string) =>
  new InvalidParametersError({ from: [`${from} was published after to (${to}): from is the earlier release`] });

export const HISTORY = {
  path: '/v1/history',
  options: {
    metric: metricOption([{ value: 'ggr' }, { value: 'turnover' }]),
    period,
    limit: limitOption(
      100,
      'Rows per page, given once. Without it, JSON pages by 100 and **CSV and Arrow stream every row of the history**, charged as one export (the daily export budget, EXPORTS_OPEN_PER_KEY); with it, every format pages and no export is charged.',
      '/v1/history?metric=ggr&from=2026-11&to=2026-12',
    ),
    cursor,
    format: formatOption(PAGE_FORMATS, ['csv', 'arrow']),
    from: {
      ...from,
      description:
        'The first release `YYYY-MM` of the range; by default the first published one. Validity is never clipped to it: a value published before it and still valid in it shows its own `valid_from`. Given once.',
      errors: { tooManyReleases: tooManyReleases(60, '2019-01', '2025-12', 84), fromAfterTo: fromAfterTo('2025-12', '2025-11') },
    },
    to: { ...to, description: 'The last release `YYYY-MM` of the range; by default the current one. Given once.' },
    output: {
      schema: v.optional(single(v.picklist(OUTPUTS, `Expected ${OUTPUTS.join(', ')}`)), 'changes'),
      description:
        '`changes` (the default): one row per observation and release in which it was `added`, `changed` or `removed`, with `valid_from` and `valid_to`; `first`: one row per observation, its first published value and `first_release`; `all`: one row per observation per release in the range where it has a row, with `release`. Given once.',
      examples: [{ value: 'first' }, { value: 'all' }],
      key: (output) => output,
      // What a history view is about, as `change` is a diff's: among the first controls.
      explore: 'first',
    },
    shape: {
      schema: v.optional(single(v.picklist(SHAPES, `Expected ${SHAPES.join(' or ')}`)), 'long'),
      description:
        'With `output=all`: `long` (the default), a row per observation and release; `wide`, a row per observation with a column `<metric>_<release>` per metric and release in the range, null where it has no row. Given once.',
      examples: [
        { value: 'wide', request: '/v1/history?metric=ggr&from=2026-11&to=2026-12&output=all&limit=5' },
        { value: 'long', request: '/v1/history?metric=ggr&from=2026-11&to=2026-12&output=all&limit=5' },
      ],
      errors: { wideWithoutAll },
      key: (shape) => shape,
    },
  },
  others: 'filters',
  example: '/v1/history?metric=ggr&from=2026-11&to=2026-12&country=France&limit=5',
  requestFor: (metric) => `/v1/history?metric=${metric}&limit=5`,
} as const satisfies Endpoint;

const VIEWS = ['financials', 'aggregate'] as const;

const endpoint = {
  schema: v.optional(single(v.picklist(VIEWS, `Expected ${VIEWS.join(' or ')}`)), 'financials'),
  description:
    'The endpoint whose rows are counted: `financials` (every row the filters match) or `aggregate` (the rows an aggregate adds up: without `state` in `group_by` or a `state` filter, the national rows only, which `meta.totals_rule` then names). Given once.',
  examples: [
    { value: 'aggregate', request: '/v1/facets?metric=ggr&endpoint=aggregate' },
    { value: 'financials', request: '/v1/facets?metric=ggr&endpoint=financials' },
  ],
  key: (name) => name,
} satisfies QueryOption<(typeof VIEWS)[number]>;

/**
 * An aggregate view's grouping, which decides whether its national-totals rule applies,
 * and nothing else of the counts: its part of the key is the rule's outcome, which only
 * the request knows (routes/facets.ts), so two groupings with one outcome share an answer.
 */
const facetsGroupBy = {
  ...groupBy,
  key: () => undefined,
  description: `With \`endpoint=aggregate\`, the view's ${groupBy.description.charAt(0).toLowerCase()}${groupBy.description.slice(1)} Grouping by \`state\` counts every row; otherwise ignored.`,
  examples: [
    { value: ['state'], request: '/v1/facets?metric=ggr&endpoint=aggregate&group_by=state' },
    { value: ['region'], request: '/v1/facets?metric=ggr&endpoint=aggregate&group_by=region' },
  ],
} satisfies QueryOption<string[]>;

export const FACETS = {
  path: '/v1/facets',
  options: { metric: metricOption([{ value: 'ggr' }, { value: 'fx' }]), period, release, as_of: asOf, endpoint, group_by: facetsGroupBy },
  others: 'filters',
  example: '/v1/facets?metric=ggr&country=France&year=2024',
  requestFor: (metric) => `/v1/facets?metric=${metric}`,
} as const satisfies Endpoint;

export const EXPORT = {
  path: '/v1/export',
  options: {
    metric: metricOption([{ value: 'fx' }, { value: 'country', request: '/v1/export?metric=country&format=csv' }]),
    period,
    format: formatOption(EXPORT_FORMATS, ['csv', 'ndjson']),
    release,
    as_of: asOf,
  },
  others: 'filters',
  example: '/v1/export?metric=fx&fx_local_currency=JPY&format=csv',
  requestFor: (metric) => `/v1/export?metric=${metric}&format=csv`,
} as const satisfies Endpoint;

/** /v1/catalog ignores any other parameter, as it always has. */
export const CATALOG = {
  path: '/v1/catalog',
  options: { release, as_of: asOf },
  others: 'ignored',
  example: '/v1/catalog',
} as const satisfies Endpoint;

export { AGGREGATE };

export const ENDPOINTS: readonly Endpoint[] = [FINANCIALS, REFERENCE, AGGREGATE, REVISIONS, HISTORY, FACETS, EXPORT, CATALOG];
