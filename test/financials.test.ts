import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DATASETS, type DatasetDef } from '../src/registry.ts';
import { FIXTURE_RELEASE, startTestService, type TestService, walkPages } from './helpers/service.ts';

// /v1/financials against a real server over the deterministic fixture (seed 7, scale
// 0.02). Expected counts and rows come from an independent DuckDB reading the
// fixture's Parquet files directly: the oracle never goes through the service.

type Scalar = string | number;
interface FinancialRow {
  dimensions: Record<string, Scalar>;
  values: Record<string, number>;
}
/** Query-string pairs, encoded with encodeURIComponent; repeated names are allowed. */
type Pairs = readonly (readonly [string, Scalar])[];

const FINANCIAL = DATASETS.filter((d) => d.kind === 'financial');
const def = (name: string): DatasetDef => FINANCIAL.find((d) => d.name === name)!;
const quote = (ident: string) => `"${ident.replaceAll('"', '""')}"`;
const qs = (pairs: Pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&');
const financials = (pairs: Pairs) => `/v1/financials?${qs(pairs)}`;

/** An independent reading of the fixture Parquet files. */
class Oracle {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  static async open(dataDir: string): Promise<Oracle> {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    for (const d of FINANCIAL) {
      const file = path.join(dataDir, FIXTURE_RELEASE, `${d.name}.parquet`).replaceAll("'", "''");
      await connection.run(`CREATE VIEW ${quote(d.name)} AS SELECT * FROM read_parquet('${file}')`);
    }
    return new Oracle(instance, connection);
  }

  /** WHERE for dimension → values (OR within, AND across) and an inclusive year range. */
  private where(filters: Record<string, readonly Scalar[]>, years?: readonly [number, number]) {
    const params: DuckDBValue[] = [];
    const bind = (value: DuckDBValue) => `$${params.push(value)}`;
    const conditions = Object.entries(filters).map(
      ([dim, values]) => `${quote(dim)} IN (${values.map((v) => bind(dim === 'year' ? Number(v) : String(v))).join(', ')})`,
    );
    if (years) conditions.push(`year BETWEEN ${bind(years[0])} AND ${bind(years[1])}`);
    return { sql: conditions.length ? `WHERE ${conditions.join(' AND ')}` : '', params };
  }

  async count(dataset: string, filters: Record<string, readonly Scalar[]>, years?: readonly [number, number]): Promise<number> {
    const { sql, params } = this.where(filters, years);
    const reader = await this.connection.runAndReadAll(`SELECT count(*) FROM ${quote(dataset)} ${sql}`, params);
    return Number(reader.getRows()[0]![0]);
  }

  async years(dataset: string, range: readonly [number, number]): Promise<number[]> {
    const { sql, params } = this.where({}, range);
    const reader = await this.connection.runAndReadAll(`SELECT DISTINCT year FROM ${quote(dataset)} ${sql} ORDER BY 1`, params);
    return reader.getRows().map((r) => Number(r[0]));
  }

  /** Every row matching, in the documented serving order, shaped like the API's rows. */
  async rows(dataset: string, filters: Record<string, readonly Scalar[]>): Promise<FinancialRow[]> {
    const d = def(dataset);
    const { sql, params } = this.where(filters);
    const columns = [...d.dimensions, ...d.metrics].map(quote).join(', ');
    const reader = await this.connection.runAndReadAll(
      `SELECT ${columns} FROM ${quote(dataset)} ${sql} ORDER BY ${d.dimensions.map(quote).join(', ')}`,
      params,
    );
    return reader.getRowObjectsJS().map((r) => ({
      dimensions: Object.fromEntries(d.dimensions.map((k) => [k, k === 'year' ? Number(r[k]) : String(r[k])])),
      values: Object.fromEntries(d.metrics.map((k) => [k, Number(r[k])])),
    }));
  }

  /** The most and the least frequent value of a dimension (ties broken by value). */
  async extremes(dataset: string, dim: string): Promise<{ value: Scalar; count: number }[]> {
    const reader = await this.connection.runAndReadAll(
      `SELECT ${quote(dim)} AS v, count(*) AS n FROM ${quote(dataset)} GROUP BY 1 ORDER BY n DESC, v`,
    );
    const all = reader.getRows().map(([v, n]) => ({ value: dim === 'year' ? Number(v) : String(v), count: Number(n) }));
    const picks = [all[0]!, all[all.length - 1]!];
    return picks[0]!.value === picks[1]!.value ? [picks[0]!] : picks;
  }

  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}

const service: TestService = await startTestService();
let oracle: Oracle;
try {
  oracle = await Oracle.open(service.dataDir);
} catch (err) {
  await service.stop();
  throw err;
}

/** Every row of a fully walked query, checking each page's envelope on the way. */
async function walk(pairs: Pairs, expectedFilters?: Record<string, string[]>): Promise<FinancialRow[]> {
  const pages = await walkPages(service, financials(pairs), 1000);
  const metric = pairs.find(([k]) => k === 'metric')![1];
  pages.forEach((page, i) => {
    assert.is(page.meta.dataset, metric);
    assert.is(page.meta.metric, metric);
    assert.is(page.meta.row_count, page.data.length, `row_count of page ${i + 1}`);
    if (expectedFilters) assert.equal(page.meta.filters_applied, expectedFilters, `filters_applied of page ${i + 1}`);
    const last = i === pages.length - 1;
    assert.is(page.pagination.has_more, !last);
    if (last) assert.is(page.pagination.cursor, '');
    else assert.is(page.data.length, 1000, `page ${i + 1} is full`);
  });
  return pages.flatMap((page) => page.data as FinancialRow[]);
}

/** A row holds exactly the dataset's dimensions (year an integer) and metrics (numbers). */
function assertRowShape(d: DatasetDef, row: FinancialRow): void {
  assert.equal(Object.keys(row).sort(), ['dimensions', 'values']);
  assert.equal(Object.keys(row.dimensions).sort(), [...d.dimensions].sort());
  assert.equal(Object.keys(row.values).sort(), [...d.metrics].sort());
  for (const [dim, value] of Object.entries(row.dimensions)) {
    if (dim === 'year') assert.ok(Number.isInteger(value), `year is an integer: ${JSON.stringify(value)}`);
    else assert.type(value, 'string', `${dim} is a string`);
  }
  for (const [metric, value] of Object.entries(row.values)) {
    assert.ok(typeof value === 'number' && Number.isFinite(value), `${metric} is a finite number: ${JSON.stringify(value)}`);
  }
}

/** Lexicographic comparison of dimension tuples: year numerically, strings by code unit. */
function compareTuples(a: readonly Scalar[], b: readonly Scalar[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x < y) return -1;
    if (x > y) return 1;
  }
  return 0;
}

async function get(pairs: Pairs) {
  return service.get(financials(pairs));
}

function assertEmptyPage(res: Awaited<ReturnType<typeof get>>, label: string): void {
  assert.is(res.status, 200, `${label}: ${res.text}`);
  assert.equal(res.json.data, [], label);
  assert.is(res.json.meta.row_count, 0, label);
  assert.is(res.json.pagination.has_more, false, label);
  assert.is(res.json.pagination.cursor, '', label);
}

function assertFieldError(res: Awaited<ReturnType<typeof get>>, field: string, label: string): string[] {
  assert.is(res.status, 400, `${label}: ${res.status} ${res.text}`);
  assert.is(res.json?.error, 'Invalid query parameters', label);
  const messages = res.json.details?.fieldErrors?.[field];
  assert.ok(Array.isArray(messages) && messages.length > 0, `${label}: fieldErrors.${field} in ${res.text}`);
  return messages;
}

// ---------------------------------------------------------------------------------
// One filter per dimension, for every financial dataset: the most and least frequent
// value of each dimension, so both multi-page and tiny results are covered.

const Dimensions = suite('financials: every dimension of every dataset filters');

for (const d of FINANCIAL) {
  for (const dim of d.dimensions) {
    for (const { value, count } of await oracle.extremes(d.name, dim)) {
      Dimensions(`${d.name}: ${dim}=${JSON.stringify(value)} (${count} rows)`, async () => {
        const rows = await walk(
          [
            ['metric', d.name],
            [dim, value],
          ],
          { [dim]: [String(value)] },
        );
        assert.is(rows.length, count, 'row count equals the oracle');
        for (const row of rows) {
          assertRowShape(d, row);
          assert.is(row.dimensions[dim], value);
        }
      });
    }
  }
}

Dimensions.run();

// ---------------------------------------------------------------------------------

const Multi = suite('financials: several values and several dimensions');

const MULTI_CASES: { name: string; metric: string; filters: Record<string, Scalar[]> }[] = [
  { name: 'OR within country', metric: 'ggr', filters: { country: ['France', 'Spain'] } },
  { name: 'OR within country, AND channel', metric: 'ggr', filters: { country: ['France', 'Spain'], channel: ['Online'] } },
  {
    name: 'three dimensions with two values each',
    metric: 'turnover',
    filters: { region: ['Europe', 'Africa'], category: ['Betting', 'Lottery'], year: [2020, 2021] },
  },
  { name: 'fx: currency and region', metric: 'fx', filters: { fx_local_currency: ['USD', 'EUR'], region: ['Europe', 'North America'] } },
  {
    name: 'country: calculation and temporal',
    metric: 'country',
    filters: { calculation: ['Reported', 'Estimated'], temporal: ['Forecast'] },
  },
  { name: 'an unknown value beside a real one', metric: 'ggr', filters: { country: ['France', 'Atlantis'] } },
];

for (const c of MULTI_CASES) {
  Multi(`${c.metric}: ${c.name}`, async () => {
    const pairs: [string, Scalar][] = [['metric', c.metric]];
    for (const [dim, values] of Object.entries(c.filters)) for (const v of values) pairs.push([dim, v]);
    // Echoed canonically: sorted values (these cases hold no year that sorts differently as text).
    const echoed = Object.fromEntries(Object.entries(c.filters).map(([dim, values]) => [dim, values.map(String).sort()]));
    const rows = await walk(pairs, echoed);
    const expected = await oracle.count(c.metric, c.filters);
    assert.ok(expected > 0, 'the case selects some rows');
    assert.is(rows.length, expected);
    for (const row of rows) {
      assertRowShape(def(c.metric), row);
      for (const [dim, values] of Object.entries(c.filters)) {
        assert.ok(values.includes(row.dimensions[dim]!), `${dim}=${JSON.stringify(row.dimensions[dim])} is one of ${values.join(', ')}`);
      }
    }
  });
}

Multi('OR within a dimension returns rows of each value', async () => {
  const rows = await walk([
    ['metric', 'ggr'],
    ['country', 'France'],
    ['country', 'Spain'],
  ]);
  const seen = new Set(rows.map((r) => r.dimensions.country));
  assert.equal([...seen].sort(), ['France', 'Spain']);
});

Multi('a repeated value is the same as the value once, and is echoed once', async () => {
  const once = await walk(
    [
      ['metric', 'ggr'],
      ['country', 'France'],
    ],
    { country: ['France'] },
  );
  const twice = await walk(
    [
      ['metric', 'ggr'],
      ['country', 'France'],
      ['country', 'France'],
    ],
    { country: ['France'] },
  );
  assert.ok(once.length > 0);
  assert.equal(twice, once);
  const mixed = await get([
    ['metric', 'ggr'],
    ['country', 'Spain'],
    ['country', 'France'],
    ['country', 'Spain'],
    ['year', 2020],
    ['year', 2020],
  ]);
  assert.is(mixed.status, 200, mixed.text);
  assert.equal(mixed.json.meta.filters_applied, { country: ['France', 'Spain'], year: ['2020'] });
  assert.is(mixed.json.meta.row_count, mixed.json.data.length);
  assert.is(mixed.json.data.length, await oracle.count('ggr', { country: ['Spain', 'France'], year: [2020] }));
});

Multi('filters_applied is canonical: catalog order, sorted values, integer years, period last', async () => {
  const forms = [
    [
      ['metric', 'ggr'],
      ['year', '02021'],
      ['country', 'Spain'],
      ['period', '2019-01-01:2022-12-31'],
      ['year', 2020],
      ['country', 'France'],
      ['year', 999],
      ['country', 'Spain'],
    ],
    [
      ['period', '2019-01-01:2022-12-31'],
      ['country', 'France'],
      ['year', 2021],
      ['country', 'Spain'],
      ['year', 999],
      ['metric', 'ggr'],
      ['year', 2020],
    ],
  ] as const;
  const [first, second] = await Promise.all(forms.map((pairs) => get(pairs)));
  assert.is(first!.status, 200, first!.text);
  assert.is(
    JSON.stringify(first!.json.meta.filters_applied),
    '{"year":["999","2020","2021"],"country":["France","Spain"],"period":["2019-01-01:2022-12-31"]}',
  );
  assert.is(second!.text, first!.text, 'the same bytes in any parameter and value order');
});

Multi('a filter walk returns exactly the oracle rows, in order', async () => {
  const rows = await walk([
    ['metric', 'ggr'],
    ['country', 'France'],
    ['country', 'Spain'],
  ]);
  assert.equal(rows, await oracle.rows('ggr', { country: ['France', 'Spain'] }));
});

Multi('several years; echoed as strings', async () => {
  const years = [2001, 2015, 2030];
  const rows = await walk([['metric', 'ggr'], ...years.map((y) => ['year', y] as const)], { year: years.map(String) });
  assert.is(rows.length, await oracle.count('ggr', { year: years }));
  assert.equal([...new Set(rows.map((r) => r.dimensions.year))].sort(), years);
});

Multi('a value that exists nowhere gives an empty page', async () => {
  for (const [dim, value] of [
    ['country', 'Atlantis'],
    ['region', 'Atlantis'],
    ['year', 1850],
    ['product', 'france'],
  ] as const) {
    const res = await get([
      ['metric', 'ggr'],
      [dim, value],
    ]);
    assertEmptyPage(res, `${dim}=${value}`);
    assert.equal(res.json.meta.filters_applied, { [dim]: [String(value)] });
  }
});

Multi('state= (empty) selects the national rows', async () => {
  for (const metric of ['ggr', 'fx']) {
    const rows = await walk(
      [
        ['metric', metric],
        ['state', ''],
      ],
      { state: [''] },
    );
    const expected = await oracle.count(metric, { state: [''] });
    assert.ok(expected > 0);
    assert.is(rows.length, expected, `${metric} state=''`);
    assert.ok(
      rows.every((r) => r.dimensions.state === ''),
      `${metric}: every row is national`,
    );
  }
});

Multi.run();

// ---------------------------------------------------------------------------------

const Period = suite('financials: period');

const PERIOD_CASES: { period: string; years: [number, number] }[] = [
  { period: '2020-01-01:2020-12-31', years: [2020, 2020] },
  { period: '2019-12-31:2021-01-01', years: [2019, 2021] },
  { period: '2020-06-15:2020-06-15', years: [2020, 2020] },
  { period: '2024-02-29:2024-02-29', years: [2024, 2024] },
  { period: '2024-02-29:2025-03-01', years: [2024, 2025] },
];

for (const c of PERIOD_CASES) {
  Period(`period=${c.period} keeps the years ${c.years.join('..')}`, async () => {
    const rows = await walk([
      ['metric', 'ggr'],
      ['period', c.period],
    ]);
    assert.is(rows.length, await oracle.count('ggr', {}, c.years));
    const seen = [...new Set(rows.map((r) => r.dimensions.year as number))].sort();
    assert.equal(seen, await oracle.years('ggr', c.years));
  });
}

Period('period also applies to the fx dataset', async () => {
  const rows = await walk([
    ['metric', 'fx'],
    ['period', '2019-12-31:2021-01-01'],
    ['country', 'France'],
  ]);
  assert.is(rows.length, await oracle.count('fx', { country: ['France'] }, [2019, 2021]));
  assert.ok(rows.length > 0 && rows.every((r) => (r.dimensions.year as number) >= 2019 && (r.dimensions.year as number) <= 2021));
});

Period('a range beyond the data gives an empty page', async () => {
  // Years 0000-0099 are years like any other (Date.UTC would read them as 1900-1999).
  for (const period of [
    '1900-01-01:1901-01-01',
    '2100-01-01:2200-12-31',
    '0000-01-01:0099-12-31',
    '0000-02-29:0004-02-29',
    '0099-12-31:1999-12-31',
  ]) {
    assertEmptyPage(
      await get([
        ['metric', 'ggr'],
        ['period', period],
      ]),
      period,
    );
  }
});

Period('period AND year', async () => {
  const both = await walk([
    ['metric', 'ggr'],
    ['period', '2018-01-01:2022-12-31'],
    ['year', 2020],
    ['year', 2025],
  ]);
  assert.is(both.length, await oracle.count('ggr', { year: [2020] }));
  assert.ok(both.length > 0 && both.every((r) => r.dimensions.year === 2020));
  assertEmptyPage(
    await get([
      ['metric', 'ggr'],
      ['period', '2018-01-01:2019-12-31'],
      ['year', 2020],
    ]),
    'year outside the period',
  );
});

const FORMAT = 'Expected format: YYYY-MM-DD:YYYY-MM-DD';
const BAD_PERIODS: { period: string | string[]; why: string; exactly?: string[] }[] = [
  { period: '2021-02-30:2021-03-01', why: 'impossible date' },
  { period: '2023-02-29:2023-03-01', why: 'leap day of a common year' },
  { period: '2020-13-01:2020-12-31', why: 'month 13' },
  { period: '2020-01-01:2020-00-31', why: 'month 0' },
  { period: '0001-02-29:0001-03-01', why: 'leap day of year 1', exactly: ['Not a calendar date: 0001-02-29'] },
  { period: '0000-01-01:0100-02-29', why: 'leap day of year 100', exactly: ['Not a calendar date: 0100-02-29'] },
  { period: '2021-03-01:2021-02-01', why: 'start after end' },
  { period: '2021-01-01:2020-12-31', why: 'start year after end year' },
  { period: '2020-01-01', why: 'a single date', exactly: [FORMAT] },
  { period: '2020-1-1:2020-12-31', why: 'unpadded', exactly: [FORMAT] },
  { period: '2020-01-01/2020-12-31', why: 'wrong separator', exactly: [FORMAT] },
  { period: '', why: 'empty', exactly: [FORMAT] },
  { period: ['2020-01-01:2020-12-31', '2021-01-01:2021-12-31'], why: 'repeated' },
];

for (const c of BAD_PERIODS) {
  Period(`400 for period ${JSON.stringify(c.period)} (${c.why})`, async () => {
    const periods = Array.isArray(c.period) ? c.period : [c.period];
    const res = await get([['metric', 'ggr'], ...periods.map((p) => ['period', p] as const)]);
    const messages = assertFieldError(res, 'period', c.why);
    if (c.exactly) assert.equal(messages, c.exactly);
  });
}

Period.run();

// ---------------------------------------------------------------------------------

const Limit = suite('financials: limit and order');

Limit('the default page is 100 rows', async () => {
  const res = await get([['metric', 'ggr']]);
  assert.is(res.status, 200, res.text);
  assert.is(res.json.data.length, 100);
  assert.is(res.json.meta.row_count, 100);
  assert.is(res.json.pagination.has_more, true);
  assert.type(res.json.pagination.cursor, 'string');
  assert.ok(res.json.pagination.cursor.length > 0);
  assert.equal(res.json.meta.filters_applied, {});
});

Limit('limit=1000 and limit=1', async () => {
  for (const limit of [1000, 1]) {
    const res = await get([
      ['metric', 'ggr'],
      ['limit', limit],
    ]);
    assert.is(res.status, 200, res.text);
    assert.is(res.json.data.length, limit);
    assert.is(res.json.meta.row_count, limit);
    assert.is(res.json.pagination.has_more, true);
  }
});

for (const limit of [['0'], ['1001'], ['-1'], ['1.5'], ['abc'], [''], ['1e2'], ['10', '20']]) {
  Limit(`400 for limit=${limit.join('&limit=')}`, async () => {
    assertFieldError(await get([['metric', 'ggr'], ...limit.map((l) => ['limit', l] as const)]), 'limit', `limit ${limit.join(',')}`);
  });
}

const ORDER_CASES: Pairs[] = [
  [
    ['metric', 'ggr'],
    ['region', 'Europe'],
  ],
  [
    ['metric', 'ggr'],
    ['category', 'Betting'],
    ['channel', 'Land'],
  ],
  [
    ['metric', 'fx'],
    ['region', 'North America'],
  ],
  [
    ['metric', 'country'],
    ['calculation', 'Reported'],
  ],
];

for (const pairs of ORDER_CASES) {
  Limit(`rows are ordered by year, then the registry's dimensions: ${qs(pairs)}`, async () => {
    const d = def(String(pairs[0]![1]));
    const rows = await walk(pairs);
    assert.ok(rows.length > 1000, 'spans several pages');
    const tuples = rows.map((r) => d.dimensions.map((dim) => r.dimensions[dim]!));
    for (let i = 1; i < tuples.length; i++) {
      assert.ok(
        compareTuples(tuples[i - 1]!, tuples[i]!) < 0,
        `row ${i} ${JSON.stringify(tuples[i])} follows ${JSON.stringify(tuples[i - 1])}`,
      );
    }
  });
}

Limit.after(async () => {
  oracle.close();
  await service.stop();
});

Limit.run();
