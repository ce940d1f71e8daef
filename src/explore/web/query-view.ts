import type {
  AggregatePage,
  CatalogAnswer,
  CatalogEntry,
  FinancialPage,
  HistoryPage,
  Metric,
  ReferenceDataset,
  ReferencePage,
  RevisionPage,
} from 'data-query-client';
import type { Endpoint } from '../views.ts';
import { download, getJson, type OperationParameter } from './api.ts';
import { renderChart, TABLE_ID } from './chart.ts';
import { chartData, chartTitle, keyUnit, measures } from './chart-data.ts';
import { datasetControl, parameterControls } from './controls.ts';
import { announce, h, statusLine } from './dom.ts';
import { showError } from './errors.ts';
import { renderFilters, ruleText } from './facets.ts';
import { restoreFocus } from './focus-keeper.ts';
import { FORECAST, forecastYears, yearSpan } from './forecast.ts';
import { type Operations, operations } from './openapi.ts';
import { pageYears } from './page-years.ts';
import { NO_RELEASE_CHART, releaseChart } from './release-chart.ts';
import { rowHistory } from './row-history.ts';
import { installLines, SNIPPET_KINDS, snippet } from './snippets.ts';
import { type Flat, flatten, renderTable } from './table.ts';
import { unitDefault } from './unit-default.ts';
import { apiPath, datasetParam, navigate, pageUrl } from './url-state.ts';
import { carriedUrl } from './view-links.ts';

// /explore/<endpoint>?<query>: the controls, the answer of /v1/<endpoint>?<query> as a
// table and a chart, its pages, and the same request as code and as downloads.

/** A /v1 answer as the typed client types it. */
type Answer = FinancialPage<Metric> | ReferencePage<ReferenceDataset> | AggregatePage<Metric> | RevisionPage<Metric> | HistoryPage<Metric>;

export async function renderQuery(into: HTMLElement, endpoint: Endpoint, params: URLSearchParams, stale: () => boolean): Promise<void> {
  into.append(h('h2', {}, `/v1/${endpoint}`));
  const problems = h('div', { class: 'problems' });
  let cat: CatalogAnswer;
  let doc: Operations;
  let parametersOf: (path: string) => readonly OperationParameter[];
  try {
    // Both kept for the page's life, asked once, not once per view: the catalog by api.ts's
    // store, /openapi.json (no key needed) by openapi.ts, whose parameters the page reads.
    [cat, doc] = await Promise.all([getJson<CatalogAnswer>('/v1/catalog'), operations()]);
    parametersOf = (path) => doc.paths[path]!.get.parameters;
  } catch (err) {
    into.append(problems);
    showError(problems, err);
    return;
  }
  const operation = parametersOf(`/v1/${endpoint}`);
  const name = params.get(datasetParam(endpoint));
  const dataset = cat.datasets.find((d) => d.name === name);
  // An aggregate in mixed currencies would be refused: the view opens in the catalog's first one, and says so.
  const unit = endpoint === 'aggregate' && dataset ? unitDefault(cat, dataset, params) : undefined;
  if (unit) {
    params = new URLSearchParams(params);
    params.set(...unit);
    history.replaceState(null, '', pageUrl(endpoint, params));
  }
  // The dataset, the first controls and the filters, then "More options": the order an analyst reads them in.
  const { first, more } = parameterControls(endpoint, params, operation, cat.datasets);
  const form = h('form', { class: 'controls', 'aria-label': 'Query' }, datasetControl(endpoint, params, operation), ...first);
  form.addEventListener('submit', (event) => event.preventDefault());
  const filters = h('div', { class: 'filters-slot' });
  form.append(filters);
  if (more) form.append(more);
  // A refusal's summary right below the controls, each field's own error beside it (errors.ts).
  into.append(form, problems);
  if (unit) {
    const [dimension, value] = unit;
    into.append(
      h(
        'p',
        { class: 'note picked', role: 'note' },
        `${dimension}=${value} picked for you, the catalog's first ${dimension}: ${dataset!.name} cannot add up values in different units. Change it in the ${dimension} filter, or add ${dimension} to group_by.`,
      ),
    );
  }
  // The answer is asked for beside the facets, not after them: counting every dimension
  // of a large release takes longer than the answer, and the table and chart need only it.
  const answered = dataset && getJson<Answer>(apiPath(endpoint, params));
  const forecast = dataset && forecastYears(dataset, params);
  // The rule the facets counted with (an aggregate's national totals), said beside the table, as /v1/facets words it.
  const rule = h('p', { class: 'note rule', role: 'note', hidden: true });
  if (dataset && endpoint !== 'reference') {
    const slot = h('fieldset', { class: 'filters', 'aria-busy': 'true' }, h('legend', {}, 'Filters'));
    filters.append(slot);
    void renderFilters(endpoint, params, dataset, parametersOf('/v1/facets')).then(({ element, facets }) => {
      if (stale()) return;
      slot.replaceWith(element);
      rule.textContent = ruleText(facets?.meta);
      rule.hidden = !rule.textContent;
      // A facet chip used is found again only now.
      restoreFocus();
    });
  }
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
  // The whole view as an aggregate by year: where a chart of one page cannot show every year.
  const byYear = carriedUrl({ endpoint, params }, 'aggregate', doc, { group_by: 'year' });
  renderAnswer(into, endpoint, params, dataset, answer, operation, cat.derived, forecast!, rule, byYear);
}

function renderAnswer(
  into: HTMLElement,
  endpoint: Endpoint,
  params: URLSearchParams,
  dataset: CatalogEntry,
  answer: Answer,
  operation: readonly OperationParameter[],
  derived: CatalogAnswer['derived'],
  /** The dataset's forecast years (forecast.ts), which the chart waits for and the table does not. */
  forecast: Promise<ReadonlySet<number>>,
  /** Where the facets' counting rule is said, beside the table. */
  rule: HTMLElement,
  /** The same filters as an aggregate by year. */
  byYear: string,
): void {
  const flat = flatten(answer.data as unknown as readonly Record<string, unknown>[]);
  const dims = new Set([...dataset.dimensions, 'change']);
  const rows = answer.data.length;
  const { meta } = answer;
  const release = 'release' in meta ? `, release ${meta.release}` : 'releases' in meta ? `, releases ${meta.from} to ${meta.to}` : '';
  const caption = `${rows} ${endpoint === 'aggregate' ? 'groups' : 'rows'} of ${dataset.name}${release}`;
  const warnings = ('warnings' in meta && meta.warnings) || [];
  if (warnings.length) into.append(h('ul', { class: 'warnings', role: 'note' }, ...warnings.map((w) => h('li', {}, w))));
  const withdrawn = ('withdrawn' in meta && meta.withdrawn) || [];
  if (withdrawn.length)
    into.append(
      h(
        'p',
        { class: 'note withdrawn', role: 'note' },
        `Left out, withdrawn by a rollback: ${withdrawn.map((w) => `${w.id} (withdrawn ${w.withdrawn_at})`).join(', ')}.`,
      ),
    );

  // The table is drawn as the answer arrives; the chart, and the note on forecasts, once the
  // forecast years are known too (asked beside the answer, and kept after the first view of
  // a dataset). Drawn once, marked: not drawn plain and redrawn dashed, nor a wide view's
  // measure switched from the last year to the last actual one, under the reader's eyes.
  // The skip links' targets (main.ts): focusable by them, not by Tab.
  const chartBox = h('section', { id: 'chart', class: 'chart-box', 'aria-label': 'Chart', tabindex: '-1', 'aria-busy': 'true' });
  // A history is charted by release, not by year (release-chart.ts).
  const paged = endpoint === 'history' ? undefined : pageYears(flat, params.has('cursor'), Boolean(answer.pagination?.has_more));
  if (paged) chartBox.append(pageNote(paged.whole, paged.cut, byYear));
  void forecast.then((projected) => {
    chartBox.removeAttribute('aria-busy');
    const mixed = mixedForecast(flat, params, dataset, projected);
    if (mixed.length)
      chartBox.before(
        h(
          'p',
          { class: 'forecast-note', role: 'note' },
          `This view mixes actual years with forecasts: ${yearSpan(mixed)} ${mixed.length > 1 ? 'are' : 'is'} temporal=${FORECAST}. Filter temporal to read one or the other.`,
        ),
      );
    drawChartBox(chartBox, paged?.flat ?? flat, dims, meta, dataset, derived, projected);
  });
  into.append(chartBox);

  const table = renderTable(flat, caption, dims, rowHistory(endpoint, dataset, flat));
  table.id = TABLE_ID;
  table.tabIndex = -1;
  // A table wider than the page scrolls (a history's, with its release columns): then it is a Tab stop, so arrow keys scroll it too.
  new ResizeObserver(() => {
    table.tabIndex = table.scrollWidth > table.clientWidth ? 0 : -1;
  }).observe(table);
  into.append(rule, table);
  const pages = h('nav', { class: 'pages', 'aria-label': 'Pages' });
  if (params.has('cursor')) {
    const first = h('button', { type: 'button', id: 'first-page' }, 'First page');
    first.addEventListener('click', () => {
      const next = new URLSearchParams(params);
      next.delete('cursor');
      navigate(pageUrl(endpoint, next));
    });
    pages.append(first);
  }
  if (answer.pagination?.has_more) {
    const more = h('button', { type: 'button', id: 'next-page' }, 'Next page');
    more.addEventListener('click', () => {
      const next = new URLSearchParams(params);
      next.set('cursor', answer.pagination!.cursor);
      navigate(pageUrl(endpoint, next));
    });
    pages.append(more);
  }
  into.append(pages);
  into.append(copyPanel(endpoint, params, operation), downloads(endpoint, params, dataset, answer));
}

/** The chart of an answer, with the measure it draws to pick: none when the answer has no rows or no measure. */
function drawChartBox(
  chartBox: HTMLElement,
  flat: Flat,
  dims: ReadonlySet<string>,
  meta: Answer['meta'],
  dataset: CatalogEntry,
  derived: CatalogAnswer['derived'],
  forecast: ReadonlySet<number>,
): void {
  const choices = measures(flat, dims);
  if (!flat.rows.length || !choices.length) return;
  // A history: its value in each release, where it is one observation's (release-chart.ts).
  const releases = 'releases' in meta ? meta.releases : undefined;
  if (releases && !releaseChart(flat, dataset.dimensions, releases, choices[0]!)) {
    chartBox.append(h('p', { class: 'note', role: 'note' }, NO_RELEASE_CHART));
    return;
  }
  // Wide: the first key's last actual year (a forecast year only when every year is one). Long: the first
  // measure's last derived key (the question asked: a measure's derived keys follow it), else the measure itself.
  const wideYears = ('years' in meta && meta.years) || [];
  const latest = wideYears.filter((y) => !forecast.has(y)).at(-1) ?? wideYears.at(-1);
  const first = latest === undefined ? choices[0]! : choices[0]!.replace(/_\d{4}$/, '');
  const picked = latest === undefined ? choices.filter((c) => c === first || c.startsWith(`${first}_`)).at(-1)! : `${first}_${latest}`;
  const select = h('select', { id: 'measure' }, ...choices.map((c) => h('option', { value: c }, c)));
  select.value = picked;
  select.addEventListener('change', () => drawChart(select.value));
  chartBox.append(h('div', { class: 'control' }, h('label', { for: 'measure' }, 'Measure charted'), select));
  const drawing = h('div');
  chartBox.append(drawing);
  const drawChart = (measure: string) => {
    drawing.replaceChildren();
    const data = releases ? releaseChart(flat, dataset.dimensions, releases, measure)! : chartData(flat, dims, measure, forecast);
    const unit = keyUnit(measure, derived);
    const currencies = ('filters_applied' in meta && meta.filters_applied.fx) || [];
    const title = chartTitle(measure, releases ? 'release' : data.kind === 'line' ? 'year' : 'group', unit, currencies);
    renderChart(drawing, data, { title, fileName: `${dataset.name}-${measure}`, percent: unit === 'fraction' });
  };
  drawChart(picked);
}

/** What a chart of one page draws: the years it holds whole, and where every year is charted. */
function pageNote(whole: readonly number[], cut: readonly number[], byYear: string): HTMLElement {
  const rest = `${yearSpan(cut)} ${cut.length > 1 ? 'go' : 'goes'} on beyond this page`;
  const said = whole.length
    ? `The chart draws this page's rows of ${yearSpan(whole)}, the ${whole.length > 1 ? 'years' : 'year'} it holds whole (${rest}). `
    : `No year is charted: this page holds part of ${yearSpan(cut)} only. `;
  return h(
    'p',
    { class: 'note page-years', role: 'note' },
    said,
    h('a', { href: byYear }, 'Every year of this view, as an aggregate by year'),
  );
}

/**
 * The forecast years a view reads, when it reads actual years too and its `temporal`
 * filter does not pick one of them: the years of its rows, else of its `year` filter or
 * `period`, else the dataset's span.
 */
function mixedForecast(flat: Flat, params: URLSearchParams, dataset: CatalogEntry, forecast: ReadonlySet<number>): number[] {
  if (!forecast.size || params.getAll('temporal').length === 1) return [];
  const at = flat.columns.indexOf('year');
  const span = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
  const fromFilter = params.getAll('year').flatMap((v) => {
    const [from = Number.NaN, to = from] = v.split('-').map(Number);
    return Number.isInteger(from) && Number.isInteger(to) ? span(from, to) : [];
  });
  const period = params.get('period')?.match(/^(\d{4})-\d\d-\d\d:(\d{4})-/);
  const years =
    at >= 0
      ? flat.rows.map((r) => r[at]).filter((y): y is number => typeof y === 'number')
      : fromFilter.length
        ? fromFilter
        : period
          ? span(Number(period[1]), Number(period[2]))
          : span(dataset.first_year ?? 0, dataset.last_year ?? -1);
  const read = [...new Set(years)];
  const projected = read.filter((y) => forecast.has(y));
  return projected.length && projected.length < read.length ? projected.sort((a, b) => a - b) : [];
}

function copyPanel(endpoint: Endpoint, params: URLSearchParams, operation: readonly OperationParameter[]) {
  const shown = h('pre', { id: 'snippet', role: 'region', tabindex: '0', 'aria-label': 'Snippet' });
  const panel = h(
    'section',
    { class: 'copy-as', 'aria-labelledby': 'copy-as-title' },
    h('h3', { id: 'copy-as-title' }, 'Copy as'),
    h('p', { class: 'muted' }, 'Each reads your key from the DQS_API_KEY environment variable; no snippet holds it.'),
  );
  const buttons = h('div', { class: 'actions' });
  const status = statusLine();
  for (const kind of SNIPPET_KINDS) {
    const button = h('button', { type: 'button', 'data-snippet': kind }, kind);
    button.addEventListener('click', async () => {
      // The document is the one the view was drawn from, already asked: its version is the clients'.
      const { info } = await operations();
      const text = snippet(kind, { origin: location.origin, version: info.version, endpoint, params, parameters: operation });
      shown.textContent = text;
      shown.dataset.kind = kind;
      try {
        await navigator.clipboard.writeText(text);
        announce(`Copied the ${kind} snippet.`, status);
      } catch {
        announce(`Shown the ${kind} snippet; the browser did not allow copying it.`, status);
      }
    });
    buttons.append(button);
  }
  const installs = h('pre', { id: 'client-installs', tabindex: '0', 'aria-labelledby': 'client-installs-title' });
  // The document is the one the view was drawn from, already asked: its version is the clients'.
  void operations().then(({ info }) => {
    installs.textContent = installLines(location.origin, info.version);
  });
  panel.append(
    buttons,
    status,
    shown,
    h('p', { id: 'client-installs-title', class: 'muted' }, 'Install a client from this server:'),
    installs,
  );
  return panel;
}

/**
 * The downloads of a view, each saying whether it holds the page shown or the whole view,
 * and how many rows where the page knows: the whole view's count is the page's when no
 * page comes before or after it. Aggregates and revisions answer whole as CSV or Arrow
 * without `limit`; financials through /v1/export; a reference page is all it has.
 */
function downloads(endpoint: Endpoint, params: URLSearchParams, dataset: CatalogEntry, answer: Answer) {
  const box = h('section', { class: 'downloads', 'aria-labelledby': 'downloads-title' }, h('h3', { id: 'downloads-title' }, 'Download'));
  const status = statusLine();
  const get = (label: string, path: string, file: string) => {
    const button = h('button', { type: 'button' }, label);
    button.addEventListener('click', async () => {
      try {
        await download(path, file);
        announce(`Saved ${file}`, status);
      } catch (err) {
        showError(box.querySelector('.problems') as HTMLElement, err);
      }
    });
    return button;
  };
  const unit = endpoint === 'aggregate' ? 'groups' : 'rows';
  const shown = answer.data.length;
  const count = (n: number) => `${n.toLocaleString('en')} ${n === 1 ? unit.slice(0, -1) : unit}`;
  const onlyPage = !answer.pagination?.has_more && !params.has('cursor');
  const whole = onlyPage ? count(shown) : `every ${unit.slice(0, -1)}, more than this page's ${shown}`;
  const asked = (format: string, drop: readonly string[]) => {
    const q = new URLSearchParams(params);
    for (const name of ['cursor', ...drop]) q.delete(name);
    q.set('format', format);
    return apiPath(endpoint, q);
  };
  const file = `${dataset.name}-${endpoint}`;
  const actions = h('div', { class: 'actions' });
  if (endpoint === 'aggregate' || endpoint === 'revisions' || endpoint === 'history') {
    const export_ = endpoint === 'aggregate' ? '' : ', one of your daily exports';
    actions.append(
      get(`CSV — whole view (${whole}${export_})`, asked('csv', ['limit']), `${file}.csv`),
      get(`Arrow — whole view (${whole}${export_})`, asked('arrow', ['limit']), `${file}.arrow`),
    );
  } else {
    // A cursor is made for its format: the CSV starts from the view's first page.
    const page = params.has('cursor') ? 'first page of this view' : `this page, ${count(shown)}`;
    actions.append(get(`CSV — ${page}`, asked('csv', []), `${file}.csv`));
  }
  if (endpoint === 'financials') {
    // /v1/export takes the filters of /v1/financials: every matching row, not a page.
    const exp = new URLSearchParams();
    const dims = new Set([...dataset.dimensions, 'metric', 'period', 'release', 'as_of']);
    for (const [k, v] of params) if (dims.has(k)) exp.append(k, v);
    actions.append(get(`Parquet — whole view (${whole}, through /v1/export)`, `/v1/export?${exp}`, `${dataset.name}.parquet`));
  }
  box.append(actions, status, h('div', { class: 'problems' }));
  return box;
}
