import type { CatalogEntry, FacetsAnswer, Metric } from 'data-query-client';
import type { Endpoint } from '../views.ts';
import { ApiFailure, getJson, type OperationParameter } from './api.ts';
import { control, setParam } from './controls.ts';
import { h } from './dom.ts';
import { markFields } from './errors.ts';
import { unitDimension } from './unit-default.ts';

// The filters of a view: one per dimension of the dataset, each with the counts of
// GET /v1/facets beside its values (each dimension's counts apply every other filter).
// Clicking a value adds it to the filter, or takes it out: filters are repeated
// parameters, `country=France&country=Spain`. A value is compared as the URL holds it,
// as text: /v1/facets sends `year` as a number.

/**
 * The facets request of a view: its dataset, its endpoint where /v1/facets counts that
 * endpoint's rows (an aggregate's national-totals rule), and those of its parameters
 * /v1/facets takes for it (its filters, period, release, grouping).
 */
function facetsPath(endpoint: Endpoint, dataset: { name: string }, params: URLSearchParams, facets: readonly OperationParameter[]): string {
  const taken = new Set(
    facets.filter((p) => p.in === 'query' && (p['x-metrics'] ?? [dataset.name]).includes(dataset.name)).map((p) => p.name),
  );
  const query = new URLSearchParams({ metric: dataset.name });
  if (facets.find((p) => p.name === 'endpoint')?.schema?.enum?.includes(endpoint)) query.set('endpoint', endpoint);
  for (const [name, value] of params) if (taken.has(name) && !query.has(name)) query.append(name, value);
  return `/v1/facets?${query}`;
}

/** The last counts /v1/facets answered for each view's endpoint and dataset, in this page's life. */
const lastGood = new Map<string, FacetsAnswer<Metric>>();

/** The rule /v1/facets says it counted with, in words, or '' when it applied none. */
export function ruleText(meta: FacetsAnswer<Metric>['meta'] | undefined): string {
  const rule = meta?.totals_rule;
  if (!rule) return '';
  return `The ${rule.means} only (${rule.dimension} ${JSON.stringify(rule.value)}): add ${rule.dimension} to group_by, or pick ${rule.dimension} values in the filters, to see the rest.`;
}

/** The filters, and the facets answer they were counted from (undefined when it failed). */
export interface Filters {
  readonly element: HTMLElement;
  readonly facets: FacetsAnswer<Metric> | undefined;
}

export async function renderFilters(
  endpoint: Endpoint,
  params: URLSearchParams,
  dataset: CatalogEntry,
  /** /v1/facets' parameters in /openapi.json. */
  facetsParameters: readonly OperationParameter[],
): Promise<Filters> {
  const box = h('fieldset', { class: 'filters' }, h('legend', {}, 'Filters'));
  let facets: FacetsAnswer<Metric> | undefined;
  let failure: unknown;
  const path = facetsPath(endpoint, dataset, params, facetsParameters);
  try {
    facets = await getJson<FacetsAnswer<Metric>>(path);
    lastGood.set(`${endpoint} ${dataset.name}`, facets);
  } catch (err) {
    failure = err;
  }
  // A refused view keeps the counts of the last one that answered, so the filters to fix it stay.
  const kept = failure === undefined ? undefined : lastGood.get(`${endpoint} ${dataset.name}`);
  if (failure !== undefined) {
    const problem = failure instanceof ApiFailure ? failure.error : String(failure);
    box.append(
      h(
        'p',
        { class: 'note', role: 'note' },
        kept
          ? `The counts are those of the last view that answered (this one was refused: ${problem}).`
          : `Value counts are not available (${problem}); the filters still work.`,
      ),
    );
    facets = kept;
  }
  // The unit an aggregate adds up in takes one value: its chip replaces the value, where another would add a second (400 mixed_units).
  const single = endpoint === 'aggregate' ? unitDimension(dataset, params) : undefined;
  for (const dimension of dataset.dimensions) {
    const chosen = params.getAll(dimension);
    const input = h('input', { type: 'text', value: chosen.join(','), autocomplete: 'off', spellcheck: 'false' });
    input.addEventListener('change', () =>
      setParam(
        endpoint,
        params,
        dimension,
        input.value
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean),
      ),
    );
    const group = h('div', { class: 'facet' }, control(dimension, `${dimension} (comma-separated)`, input));
    const values = (
      facets?.data as Readonly<Record<string, FacetsAnswer<Metric>['data'][keyof FacetsAnswer<Metric>['data']]>> | undefined
    )?.[dimension];
    if (values?.length) {
      const list = h('ul', { class: 'facet-values', 'aria-label': `${dimension} values with row counts` });
      for (const { value, rows } of values) {
        const text = String(value);
        const on = chosen.includes(text);
        const button = h(
          'button',
          { type: 'button', 'aria-pressed': String(on), 'data-facet': dimension, 'data-value': text },
          text === '' ? '(empty)' : text,
          h('span', { class: 'count' }, ` ${rows.toLocaleString('en')}`),
        );
        button.addEventListener('click', () =>
          setParam(endpoint, params, dimension, on ? chosen.filter((v) => v !== text) : dimension === single ? [text] : [...chosen, text]),
        );
        list.append(h('li', {}, button));
      }
      group.append(list);
      const left = (facets?.meta.values_left_out as Readonly<Record<string, number>> | undefined)?.[dimension];
      if (left) group.append(h('p', { class: 'muted' }, `${left} more values not listed: type them above.`));
    }
    box.append(group);
  }
  markFields(box, failure);
  return { element: box, facets: failure === undefined ? facets : undefined };
}
