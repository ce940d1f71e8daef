import type { CatalogEntry } from '../../client/types.ts';
import type { Endpoint } from '../views.ts';
import { type OperationParameter, shapeOf } from './api.ts';
import { h } from './dom.ts';
import { datasetParam, navigate, pageUrl } from './url-state.ts';

// The controls of a query view, derived, not listed here: the dataset choice from
// /v1/catalog, and every other parameter from the endpoint's operation in /openapi.json
// (an enum becomes a select, anything else a text field). Changing one rewrites the URL
// (the same history entry: url-state.ts), which the page then shows; a cursor is dropped,
// since it is bound to the query it came from.

/** Parameters the page sets itself, or that are headers: not controls. */
const NOT_CONTROLS = new Set(['metric', 'dataset', 'cursor', 'format']);

export function setParam(endpoint: Endpoint, params: URLSearchParams, name: string, values: readonly string[]): void {
  const next = new URLSearchParams(params);
  next.delete(name);
  next.delete('cursor');
  for (const value of values) next.append(name, value);
  navigate(pageUrl(endpoint, next));
}

/** A labelled control with the note a 400 about its parameter is written into. */
export function control(name: string, label: string, field: HTMLInputElement | HTMLSelectElement, help?: string): HTMLElement {
  field.id = `param-${name}`;
  field.setAttribute('aria-describedby', `note-${name}`);
  return h(
    'div',
    { class: 'control' },
    h('label', { for: field.id }, label),
    field,
    h('small', { id: `note-${name}`, class: 'note' }, help ?? ''),
  );
}

/** The datasets the endpoint takes: its `metric` (or `dataset`) parameter's enum in /openapi.json. */
export function datasetControl(endpoint: Endpoint, params: URLSearchParams, operation: readonly OperationParameter[]): HTMLElement {
  const name = datasetParam(endpoint);
  const select = h('select', {}, h('option', { value: '' }, '(choose)'));
  for (const d of operation.find((p) => p.name === name)?.schema?.enum ?? []) select.append(h('option', { value: d }, d));
  select.value = params.get(name) ?? '';
  // A new dataset keeps no other parameter: another dataset's filters and measures would be refused.
  select.addEventListener('change', () => navigate(pageUrl(endpoint, new URLSearchParams(select.value ? { [name]: select.value } : {}))));
  return control(name, name === 'metric' ? 'Dataset (metric)' : 'Dataset', select);
}

/** Every parameter of the operation but the dataset, cursor, format and the dimension filters (which the facets show). */
export function parameterControls(
  endpoint: Endpoint,
  params: URLSearchParams,
  operation: readonly OperationParameter[],
  datasets: readonly CatalogEntry[],
): HTMLElement[] {
  // Any dataset's dimension is a filter, shown with the facets (or, of another dataset, not at all).
  const dimensions = new Set(datasets.flatMap((d) => d.dimensions));
  return operation
    .filter((p) => p.in === 'query' && !NOT_CONTROLS.has(p.name) && !dimensions.has(p.name))
    .map((p) => fieldFor(endpoint, params, p));
}

function fieldFor(endpoint: Endpoint, params: URLSearchParams, p: OperationParameter): HTMLElement {
  const values = params.getAll(p.name);
  const help = p.description?.split(/(?<=\.)\s/)[0];
  const { repeats: many, flag } = shapeOf(p);
  const choices = flag ? ['true', 'false'] : p.schema?.enum;
  if (choices && choices.length <= 40) {
    const select = h('select', {}, h('option', { value: '' }, '(none)'));
    for (const c of choices) select.append(h('option', { value: c }, c));
    select.value = values[0] ?? '';
    select.addEventListener('change', () => setParam(endpoint, params, p.name, select.value ? [select.value] : []));
    return control(p.name, p.name, select, help);
  }
  // Several values are typed comma-separated and sent repeated, as the API reads them.
  const input = h('input', { type: 'text', value: values.join(','), autocomplete: 'off', spellcheck: 'false' });
  input.addEventListener('change', () => {
    const text = input.value.trim();
    const next = !text
      ? []
      : many
        ? text
            .split(',')
            .map((v) => v.trim())
            .filter(Boolean)
        : [text];
    setParam(endpoint, params, p.name, next);
  });
  return control(p.name, many ? `${p.name} (comma-separated)` : p.name, input, help);
}
