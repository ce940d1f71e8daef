import { type Catalog, type CatalogDataset, download, getJson, type OperationParameter } from './api.ts';
import { renderChart } from './chart.ts';
import { chartData, measures } from './chart-data.ts';
import { datasetControl, parameterControls } from './controls.ts';
import { announce, h } from './dom.ts';
import { showError } from './errors.ts';
import { renderFilters } from './facets.ts';
import { SNIPPET_KINDS, snippet } from './snippets.ts';
import { flatten, renderTable } from './table.ts';
import { apiPath, datasetParam, type Endpoint, navigate, pageUrl } from './url-state.ts';

// /explore/<endpoint>?<query>: the controls, the answer of /v1/<endpoint>?<query> as a
// table and a chart, its pages, and the same request as code and as downloads.

interface Answer {
  readonly data: readonly Record<string, unknown>[];
  readonly meta: Record<string, unknown>;
  readonly pagination?: { readonly cursor: string; readonly has_more: boolean };
}

let catalog: Promise<Catalog> | undefined;
let openapi: Promise<{ paths: Record<string, { get: { parameters: OperationParameter[] } }> }> | undefined;

export async function renderQuery(into: HTMLElement, endpoint: Endpoint, params: URLSearchParams, stale: () => boolean): Promise<void> {
  into.append(h('h2', {}, `/v1/${endpoint}`));
  const problems = h('div', { class: 'problems' });
  let cat: Catalog;
  let operation: readonly OperationParameter[];
  try {
    catalog ??= getJson<Catalog>('/v1/catalog');
    // /openapi.json needs no key; the page reads each endpoint's parameters from it.
    openapi ??= fetch('/openapi.json').then((r) => r.json());
    [cat, operation] = await Promise.all([catalog, openapi.then((doc) => doc.paths[`/v1/${endpoint}`]!.get.parameters)]);
  } catch (err) {
    catalog = undefined;
    openapi = undefined;
    into.append(problems);
    showError(problems, err);
    return;
  }
  const name = params.get(datasetParam(endpoint));
  const dataset = cat.datasets.find((d) => d.name === name);
  const form = h('form', { class: 'controls', 'aria-label': 'Query' }, datasetControl(endpoint, params, operation));
  form.addEventListener('submit', (event) => event.preventDefault());
  form.append(...parameterControls(endpoint, params, operation, cat.datasets));
  into.append(form);
  // The answer is asked for beside the facets, not after them: counting every dimension
  // of a large release takes longer than the answer, and the table and chart need only it.
  const answered = dataset && getJson<Answer>(apiPath(endpoint, params));
  if (dataset && endpoint !== 'reference') {
    const slot = h('fieldset', { class: 'filters', 'aria-busy': 'true' }, h('legend', {}, 'Filters'));
    into.append(slot);
    void renderFilters(endpoint, params, dataset).then((filters) => {
      if (!stale()) slot.replaceWith(filters);
    });
  }
  into.append(problems);
  if (!answered) {
    into.append(h('p', {}, 'Choose a dataset to see its rows.'));
    return;
  }
  let answer: Answer;
  try {
    answer = await answered;
  } catch (err) {
    if (!stale()) showError(problems, err, into);
    return;
  }
  if (stale()) return;
  renderAnswer(into, endpoint, params, dataset, answer, operation);
}

function renderAnswer(
  into: HTMLElement,
  endpoint: Endpoint,
  params: URLSearchParams,
  dataset: CatalogDataset,
  answer: Answer,
  operation: readonly OperationParameter[],
): void {
  const flat = flatten(answer.data);
  const dims = new Set([...dataset.dimensions, 'change']);
  const rows = answer.data.length;
  const release = typeof answer.meta.release === 'string' ? `, release ${answer.meta.release}` : '';
  const caption = `${rows} ${endpoint === 'aggregate' ? 'groups' : 'rows'} of ${dataset.name}${release}`;
  const warnings = Array.isArray(answer.meta.warnings) ? (answer.meta.warnings as string[]) : [];
  if (warnings.length) into.append(h('ul', { class: 'warnings', role: 'note' }, ...warnings.map((w) => h('li', {}, w))));

  const chartBox = h('section', { class: 'chart-box', 'aria-label': 'Chart' });
  const choices = measures(flat, dims);
  if (rows && choices.length) {
    // The first derived key when there is one (the question asked), else the first measure; wide, its block's latest year.
    const years = answer.meta.shape === 'wide' && Array.isArray(answer.meta.years) ? (answer.meta.years as number[]) : [];
    const block = years.map((year) => `${choices[0]!.slice(0, -4)}${year}`).filter((c) => choices.includes(c));
    const picked = block.at(-1) ?? choices.find((c) => /_(pct_change|share|per_.+|index|cagr)$/.test(c)) ?? choices[0]!;
    const select = h('select', { id: 'measure' }, ...choices.map((c) => h('option', { value: c }, c)));
    select.value = picked;
    select.addEventListener('change', () => drawChart(select.value));
    chartBox.append(h('div', { class: 'control' }, h('label', { for: 'measure' }, 'Measure charted'), select));
    const drawing = h('div');
    chartBox.append(drawing);
    const drawChart = (measure: string) => {
      drawing.replaceChildren();
      const data = chartData(flat, dims, measure);
      const title = `${measure} ${data.kind === 'line' ? 'by year' : 'by group'}`;
      renderChart(drawing, data, title, `${dataset.name}-${measure}`);
    };
    queueMicrotask(() => drawChart(picked));
  }
  into.append(chartBox);

  into.append(renderTable(flat, caption, dims));
  const pages = h('nav', { class: 'pages', 'aria-label': 'Pages' });
  if (params.has('cursor')) {
    const first = h('button', { type: 'button' }, 'First page');
    first.addEventListener('click', () => {
      const next = new URLSearchParams(params);
      next.delete('cursor');
      navigate(pageUrl(endpoint, next));
    });
    pages.append(first);
  }
  if (answer.pagination?.has_more) {
    const more = h('button', { type: 'button' }, 'Next page');
    more.addEventListener('click', () => {
      const next = new URLSearchParams(params);
      next.set('cursor', answer.pagination!.cursor);
      navigate(pageUrl(endpoint, next));
    });
    pages.append(more);
  }
  into.append(pages);
  into.append(copyPanel(endpoint, params, flat.columns, operation), downloads(endpoint, params, dataset));
}

function copyPanel(endpoint: Endpoint, params: URLSearchParams, columns: readonly string[], operation: readonly OperationParameter[]) {
  const limit = operation.find((p) => p.name === 'limit')?.schema as { default?: number } | undefined;
  const input = { origin: location.origin, endpoint, params, columns, integers: new Set(['year']), defaultLimit: limit?.default ?? 100 };
  const shown = h('pre', { id: 'snippet', role: 'region', tabindex: '0', 'aria-label': 'Snippet' });
  const panel = h(
    'section',
    { class: 'copy-as', 'aria-labelledby': 'copy-as-title' },
    h('h3', { id: 'copy-as-title' }, 'Copy as'),
    h('p', { class: 'muted' }, 'Each reads your key from the DQS_API_KEY environment variable; no snippet holds it.'),
  );
  const buttons = h('div', { class: 'actions' });
  for (const kind of SNIPPET_KINDS) {
    const button = h('button', { type: 'button', 'data-snippet': kind }, kind);
    button.addEventListener('click', async () => {
      const text = snippet(kind, input);
      shown.textContent = text;
      shown.dataset.kind = kind;
      try {
        await navigator.clipboard.writeText(text);
        announce(`Copied the ${kind} snippet.`);
      } catch {
        announce(`Shown the ${kind} snippet; the browser did not allow copying it.`);
      }
    });
    buttons.append(button);
  }
  panel.append(buttons, shown);
  return panel;
}

function downloads(endpoint: Endpoint, params: URLSearchParams, dataset: CatalogDataset) {
  const box = h('section', { class: 'downloads', 'aria-labelledby': 'downloads-title' }, h('h3', { id: 'downloads-title' }, 'Download'));
  const get = (label: string, path: string, file: string) => {
    const button = h('button', { type: 'button' }, label);
    button.addEventListener('click', async () => {
      try {
        await download(path, file);
        announce(`Saved ${file}`);
      } catch (err) {
        showError(box.querySelector('.problems') as HTMLElement, err);
      }
    });
    return button;
  };
  const csv = new URLSearchParams(params);
  csv.delete('cursor');
  csv.set('format', 'csv');
  const actions = h('div', { class: 'actions' }, get('CSV', apiPath(endpoint, csv), `${dataset.name}-${endpoint}.csv`));
  if (endpoint === 'financials') {
    // /v1/export takes the filters of /v1/financials: every matching row, not a page.
    const exp = new URLSearchParams();
    const dims = new Set([...dataset.dimensions, 'metric', 'period', 'release']);
    for (const [k, v] of params) if (dims.has(k)) exp.append(k, v);
    actions.append(get('Parquet (every matching row, /v1/export)', `/v1/export?${exp}`, `${dataset.name}.parquet`));
  }
  box.append(actions, h('div', { class: 'problems' }));
  return box;
}
