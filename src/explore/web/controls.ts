import type { CatalogEntry } from 'data-query-client';
import type { Endpoint } from '../views.ts';
import { type OperationParameter, shapeOf } from './api.ts';
import { h } from './dom.ts';
import { plainText } from './plain-text.ts';
import { datasetParam, navigate, pageUrl } from './url-state.ts';

// The controls of a query view, derived, not listed here: the dataset choice from
// /v1/catalog, and every other parameter from the endpoint's operation in /openapi.json
// (an enum becomes a select, anything else a text field). Those the document marks
// `x-explore: first` come first; the rest sit under one "More options" disclosure. Help
// is each description in words, shown on demand. Changing a control rewrites the URL
// (the same history entry: url-state.ts), which the page then shows; a cursor is
// dropped, since it is bound to the query it came from.

/** Whether the analyst last left "More options" open, in this page's life. */
let moreOpen = false;

export function setParam(endpoint: Endpoint, params: URLSearchParams, name: string, values: readonly string[]): void {
  const next = new URLSearchParams(params);
  next.delete(name);
  next.delete('cursor');
  for (const value of values) next.append(name, value);
  navigate(pageUrl(endpoint, next));
}

/**
 * A labelled control with the note a 400 about its parameter is written into (empty
 * until then) and, behind a "?" button, its description in plain words.
 */
export function control(name: string, label: string, field: HTMLInputElement | HTMLSelectElement, description?: string): HTMLElement {
  field.id = `param-${name}`;
  field.setAttribute('aria-describedby', `note-${name}`);
  const head = h('div', { class: 'label-row' }, h('label', { for: field.id }, label));
  const box = h('div', { class: 'control' }, head, field, h('small', { id: `note-${name}`, class: 'note' }));
  if (description) {
    const help = h('p', { id: `help-${name}`, class: 'help', hidden: true }, plainText(description));
    const toggle = h(
      'button',
      { type: 'button', id: `help-toggle-${name}`, class: 'help-toggle', 'aria-expanded': 'false', 'aria-controls': help.id },
      '?',
      h('span', { class: 'visually-hidden' }, ` Help on ${name}`),
    );
    toggle.addEventListener('click', () => {
      help.hidden = !help.hidden;
      toggle.setAttribute('aria-expanded', String(!help.hidden));
    });
    head.append(toggle);
    box.append(help);
  }
  return box;
}

/** The datasets the endpoint takes: its `metric` (or `dataset`) parameter's enum in /openapi.json. */
export function datasetControl(endpoint: Endpoint, params: URLSearchParams, operation: readonly OperationParameter[]): HTMLElement {
  const name = datasetParam(endpoint);
  const select = h('select', {}, h('option', { value: '' }, '(choose)'));
  for (const d of operation.find((p) => p.name === name)?.schema?.enum ?? []) select.append(h('option', { value: d }, d));
  select.value = params.get(name) ?? '';
  // A new dataset keeps no other parameter: another dataset's filters and measures would be refused.
  select.addEventListener('change', () => navigate(pageUrl(endpoint, new URLSearchParams(select.value ? { [name]: select.value } : {}))));
  const description = operation.find((p) => p.name === name)?.description;
  return control(name, name === 'metric' ? 'Dataset (metric)' : 'Dataset', select, description);
}

/** The controls besides the dataset's and the facets': those to read first, and the rest under one disclosure. */
export interface ParameterControls {
  readonly first: HTMLElement[];
  /** Open when any of its parameters is set, or the analyst left it open. */
  readonly more: HTMLDetailsElement | undefined;
}

/** Every parameter of the operation but the dataset, those the page sets itself and the dimension filters (which the facets show). */
export function parameterControls(
  endpoint: Endpoint,
  params: URLSearchParams,
  operation: readonly OperationParameter[],
  datasets: readonly CatalogEntry[],
): ParameterControls {
  // Any dataset's dimension is a filter, shown with the facets (or, of another dataset, not at all).
  const dimensions = new Set(datasets.flatMap((d) => d.dimensions));
  const shown = operation.filter(
    (p) => p.in === 'query' && p['x-explore'] !== 'page' && p.name !== datasetParam(endpoint) && !dimensions.has(p.name),
  );
  const first = shown.filter((p) => p['x-explore'] === 'first').map((p) => fieldFor(endpoint, params, p));
  const rest = shown.filter((p) => p['x-explore'] !== 'first');
  if (!rest.length) return { first, more: undefined };
  const set = rest.filter((p) => params.has(p.name)).map((p) => p.name);
  const summary = h('summary', {}, 'More options', set.length ? ` (set: ${set.join(', ')})` : '');
  const more = h('details', { class: 'more', open: set.length > 0 || moreOpen }, summary);
  // A click on the summary (Enter and Space make one) is the analyst's choice; an open set by the page is not.
  summary.addEventListener('click', () => {
    moreOpen = !more.open;
  });
  more.append(h('div', { class: 'more-controls' }, ...rest.map((p) => fieldFor(endpoint, params, p))));
  return { first, more };
}

function fieldFor(endpoint: Endpoint, params: URLSearchParams, p: OperationParameter): HTMLElement {
  const values = params.getAll(p.name);
  const { repeats: many, flag } = shapeOf(p);
  const choices = flag ? ['true', 'false'] : p.schema?.enum;
  if (choices && choices.length <= 40) {
    const select = h('select', {}, h('option', { value: '' }, '(none)'));
    for (const c of choices) select.append(h('option', { value: c }, c));
    select.value = values[0] ?? '';
    select.addEventListener('change', () => setParam(endpoint, params, p.name, select.value ? [select.value] : []));
    return control(p.name, p.name, select, p.description);
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
  return control(p.name, many ? `${p.name} (comma-separated)` : p.name, input, p.description);
}
