import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DATASETS } from '../src/registry.ts';
import { FIXTURE_RELEASE, type Response, startTestService, walkPages } from './helpers/service.ts';

// Hostile filter values and parameter names: each is refused (400) or matches nothing
// (200, empty page), never a 5xx, and none of them changes what later queries return.

const enc = encodeURIComponent;

const HOSTILE_VALUES: string[] = [
  "'",
  "''",
  "' OR '1'='1",
  "France' --",
  "France' OR 1=1 --",
  '1; DROP TABLE ggr; --',
  "'); DROP TABLE ggr; --",
  '%',
  '_',
  '%25',
  '%France%',
  'Fr%',
  '_rance',
  '*',
  '.*',
  '\\',
  "\\'",
  '"',
  '"France"',
  '$1',
  '$2',
  '?',
  ':1',
  'NULL',
  'null',
  'undefined',
  '[]',
  '{}',
  '__proto__',
  '<script>alert(1)</script>',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template's syntax sent as a literal value
  '${1}',
  'a\nb',
  '\r\n',
  '\t',
  'Côte d’Ivoire',
  '🎰',
  'שלום',
  'مرحبا',
  '\u202eecnarF',
  '\u0000',
  'France\u0000',
  // Long, yet inside the 4 kB query-string limit (a longer one is a 414: edge.test.ts).
  'x'.repeat(3000),
  "'".repeat(1000),
];

// Object.prototype's members first: a lookup like `name in someObject` would take them for known names.
const PROTOTYPE_NAMES = [
  '__proto__',
  'constructor',
  'toString',
  'toLocaleString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  '__defineGetter__',
  '__lookupSetter__',
];
const HOSTILE_NAMES: string[] = [...PROTOTYPE_NAMES, 'prototype', "x'y", ...HOSTILE_VALUES];

const service = await startTestService();
const label = (text: string) => JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…(${text.length})` : text);

/** 200 or 400, JSON, and either the financial/reference envelope or an `error` string. */
function assertWellFormed(res: Response, what: string): void {
  assert.ok(res.status === 200 || res.status === 400, `${what}: status ${res.status} ${res.text.slice(0, 120)}`);
  assert.match(String(res.headers['content-type']), /application\/json/, `${what}: content-type`);
  assert.ok(res.json !== undefined && typeof res.json === 'object', `${what}: JSON body`);
  if (res.status === 200) {
    assert.type(res.json.meta, 'object', `${what}: meta`);
    assert.ok(Array.isArray(res.json.data), `${what}: data`);
    assert.is(res.json.meta.row_count, res.json.data.length, `${what}: row_count`);
    assert.type(res.json.pagination?.cursor, 'string', `${what}: pagination.cursor`);
    assert.type(res.json.pagination?.has_more, 'boolean', `${what}: pagination.has_more`);
  } else {
    assert.type(res.json.error, 'string', `${what}: error`);
  }
}

function assertEmptyPage(res: Response, what: string): void {
  assert.is(res.status, 200, `${what}: ${res.text.slice(0, 120)}`);
  assert.equal(res.json.data, [], what);
  assert.is(res.json.meta.row_count, 0, what);
  assert.is(res.json.pagination.has_more, false, what);
  assert.is(res.json.pagination.cursor, '', what);
}

function assertFieldError(res: Response, field: string, what: string): void {
  assert.is(res.status, 400, `${what}: ${res.status} ${res.text.slice(0, 120)}`);
  assert.is(res.json.error, 'Invalid query parameters', what);
  const messages = res.json.details?.fieldErrors?.[field];
  assert.ok(
    Object.hasOwn(res.json.details.fieldErrors, field) && Array.isArray(messages) && messages.length > 0,
    `${what}: fieldErrors.${field}`,
  );
}

function assertError(res: Response, what: string, check: (error: string) => boolean, expected: string): void {
  assert.is(res.status, 400, `${what}: ${res.status} ${res.text.slice(0, 120)}`);
  assert.ok(check(res.json.error), `${what}: error ${JSON.stringify(String(res.json.error).slice(0, 200))}, expected ${expected}`);
}

/** Where a hostile string goes, and what the answer must be. */
interface Target {
  name: string;
  /** The hostile strings this target takes; all by default. */
  only?: (hostile: string) => boolean;
  path: (hostile: string) => string;
  expect: (res: Response, hostile: string, what: string) => void;
}

const filterValue = (metric: string, dimension: string): Target => ({
  name: `${metric} ${dimension}=<value>`,
  path: (v) => `/v1/financials?metric=${metric}&${dimension}=${enc(v)}`,
  expect: (res, v, what) => {
    assertEmptyPage(res, what);
    assert.equal(res.json.meta.filters_applied, { [dimension]: [v] }, `${what}: echoed`);
  },
});

const GGR_DIMENSIONS = DATASETS.find((d) => d.name === 'ggr')!.dimensions.join(', ');
const FX_DIMENSIONS = DATASETS.find((d) => d.name === 'fx')!.dimensions.join(', ');

const VALUE_TARGETS: Target[] = [
  filterValue('ggr', 'country'),
  filterValue('ggr', 'state'),
  filterValue('ggr', 'product'),
  filterValue('fx', 'fx_local_currency'),
  {
    name: 'ggr year=<value>',
    path: (v) => `/v1/financials?metric=ggr&year=${enc(v)}`,
    expect: (res, _v, what) => assertFieldError(res, 'year', what),
  },
  {
    name: 'metric=<value>',
    path: (v) => `/v1/financials?metric=${enc(v)}`,
    expect: (res, v, what) =>
      assertError(
        res,
        what,
        (e) => e.startsWith(`Unknown metric: '${v}'`) && e.includes('/catalog'),
        `Unknown metric: '<value>' … /catalog`,
      ),
  },
  {
    name: 'ggr cursor=<value>',
    path: (v) => `/v1/financials?metric=ggr&cursor=${enc(v)}`,
    expect: (res, _v, what) => assertError(res, what, (e) => e === 'Invalid pagination cursor', 'Invalid pagination cursor'),
  },
  {
    name: 'ggr period=<value>',
    path: (v) => `/v1/financials?metric=ggr&period=${enc(v)}`,
    expect: (res, _v, what) => assertFieldError(res, 'period', what),
  },
  {
    name: 'ggr limit=<value>',
    path: (v) => `/v1/financials?metric=ggr&limit=${enc(v)}`,
    expect: (res, _v, what) => assertFieldError(res, 'limit', what),
  },
  {
    name: 'reference dataset=<value>',
    path: (v) => `/v1/reference?dataset=${enc(v)}`,
    expect: (res, v, what) => assertError(res, what, (e) => e.startsWith(`Unknown dataset: '${v}'`), `Unknown dataset: '<value>'`),
  },
  {
    name: 'reference cursor=<value>',
    path: (v) => `/v1/reference?dataset=country_reference&cursor=${enc(v)}`,
    expect: (res, _v, what) => assertError(res, what, (e) => e === 'Invalid pagination cursor', 'Invalid pagination cursor'),
  },
];

const invalidDimension = (metric: string, dimensions: string) => (name: string) =>
  `Invalid filter dimension "${name}" for metric "${metric}". Valid dimensions: ${dimensions}`;

const NAME_TARGETS: Target[] = [
  {
    name: 'financials ggr <name>=France',
    path: (n) => `/v1/financials?metric=ggr&${enc(n)}=France`,
    expect: (res, n, what) =>
      assertError(res, what, (e) => e === invalidDimension('ggr', GGR_DIMENSIONS)(n), invalidDimension('ggr', GGR_DIMENSIONS)(n)),
  },
  {
    // Twice, so only names that keep the request line well under Node's 16 kB header limit
    // (the client's URL handling also percent-encodes every ' into %27).
    name: 'financials fx <name>=1&<name>=2',
    only: (n) => n.length <= 100,
    path: (n) => `/v1/financials?metric=fx&${enc(n)}=1&${enc(n)}=2`,
    expect: (res, n, what) =>
      assertError(res, what, (e) => e === invalidDimension('fx', FX_DIMENSIONS)(n), invalidDimension('fx', FX_DIMENSIONS)(n)),
  },
  {
    name: 'reference <name>=1',
    path: (n) => `/v1/reference?dataset=country_reference&${enc(n)}=1`,
    expect: (res, n, what) => assertFieldError(res, n, what),
  },
];

/** Raw query strings, sent as is (malformed escapes, odd separators): only well-formedness is required. */
const RAW_QUERIES: string[] = [
  'metric=ggr&country=%',
  'metric=ggr&country=%ZZ',
  'metric=ggr&country=%C3%28',
  'metric=ggr&country=%E0%A4%A',
  'metric=ggr&country=%uD83C',
  'metric=ggr&%=1',
  'metric=ggr&=x',
  'metric=ggr&country',
  'metric=ggr&&&',
  '&&metric=ggr',
  'metric=ggr;country=France',
  'metric=ggr&country[]=France',
  'metric=ggr&country[0]=France',
  'metric[]=ggr',
  'metric=ggr&metric=fx',
  'metric=ggr&year=2020.0',
  'metric=ggr&year=1e3',
  'metric=ggr&year=99999999999999999999',
  'metric=ggr&limit=99999999999999999999',
  'metric=ggr&cursor=0.AAAAAAAAAAAAAAAAAAAAAA',
  'metric=ggr&cursor=zzzzzzzzzz.AAAAAAAAAAAAAAAAAAAAAA',
];

interface Baseline {
  france: unknown[];
  catalog: string;
  fxRows: number;
  referenceRows: number;
}

async function baseline(): Promise<Baseline> {
  const france = (await walkPages(service, '/v1/financials?metric=ggr&country=France', 1000)).flatMap((p) => p.data);
  const catalog = await service.get('/v1/catalog');
  assert.is(catalog.status, 200);
  const fx = await walkPages(service, '/v1/financials?metric=fx', 1000);
  const reference = await walkPages(service, '/v1/reference?dataset=country_reference', 1000);
  const count = (pages: any[]) => pages.reduce((n, p) => n + p.data.length, 0);
  return { france, catalog: catalog.text, fxRows: count(fx), referenceRows: count(reference) };
}

// ---------------------------------------------------------------------------------

const Hostile = suite('hostile values and parameter names');
let before: Baseline;

Hostile.before(async () => {
  before = await baseline();
  assert.ok(before.france.length > 0, 'the baseline has France rows');
  assert.ok(before.fxRows > 0 && before.referenceRows > 0, 'the baseline has fx and reference rows');
});

/**
 * Sends every hostile string to a target and checks each answer; reports every
 * string that failed (not just the first), so one run lists all offenders.
 */
async function probe(target: Target, hostiles: readonly string[]): Promise<void> {
  const failures: string[] = [];
  for (const hostile of hostiles.filter(target.only ?? (() => true))) {
    const what = `${target.name} with ${label(hostile)}`;
    const res = await service.get(target.path(hostile));
    try {
      assertWellFormed(res, what);
      target.expect(res, hostile, what);
    } catch (err) {
      failures.push((err as Error).message);
    }
  }
  assert.equal(failures, [], `${failures.length} hostile strings got a wrong answer`);
}

for (const target of VALUE_TARGETS) Hostile(`value: ${target.name}`, () => probe(target, HOSTILE_VALUES));
for (const target of NAME_TARGETS) Hostile(`name: ${target.name}`, () => probe(target, HOSTILE_NAMES));

Hostile('raw malformed query strings', async () => {
  for (const query of RAW_QUERIES) {
    assertWellFormed(await service.get(`/v1/financials?${query}`), query);
    assertWellFormed(await service.get(`/v1/reference?dataset=country_reference&${query}`), `reference ${query}`);
  }
});

Hostile('hostile values concurrently', async () => {
  const paths = HOSTILE_VALUES.flatMap((v) => VALUE_TARGETS.map((t) => t.path(v)));
  const responses = await Promise.all(paths.map((p) => service.get(p)));
  for (const [i, res] of responses.entries()) assertWellFormed(res, paths[i]!.slice(0, 120));
});

Hostile('no request was logged as a server error', () => {
  const errors = service.logs.filter((line) => typeof line.level === 'number' && line.level >= 50);
  assert.equal(errors, []);
  const statuses = service.logs.map((line) => line.status ?? line.res?.statusCode).filter((s) => typeof s === 'number');
  assert.ok(
    statuses.every((s) => s < 500),
    `5xx in the request log: ${statuses.filter((s) => s >= 500).join(', ')}`,
  );
});

Hostile('every later query returns what it returned before', async () => {
  const after = await baseline();
  assert.is(after.fxRows, before.fxRows, 'fx row count');
  assert.is(after.referenceRows, before.referenceRows, 'reference row count');
  assert.is(after.catalog, before.catalog, 'catalog');
  assert.equal(after.france, before.france, 'ggr country=France');
});

Hostile.run();

// ---------------------------------------------------------------------------------

const Literal = suite('filter values are literal');

Literal('LIKE wildcards and patterns match nothing', async () => {
  const cases: [string, string][] = [
    ['country', 'Fr%'],
    ['country', '_rance'],
    ['country', 'Franc_'],
    ['country', '%France%'],
    ['country', '%'],
    ['country', '_'],
    ['country', 'Fr*'],
    ['country', 'Fr.*'],
    ['region', 'Europ_'],
    ['state', '%'],
    ['product', 'Casino%'],
  ];
  for (const [dim, value] of cases) {
    assertEmptyPage(await service.get(`/v1/financials?metric=ggr&${dim}=${enc(value)}`), `${dim}=${value}`);
  }
});

Literal("a real value holding a quote matches exactly its rows (Cote d'Ivoire)", async () => {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const file = path.join(service.dataDir, FIXTURE_RELEASE, 'ggr.parquet');
    const reader = await connection.runAndReadAll(`SELECT count(*) FROM read_parquet('${file.replaceAll("'", "''")}') WHERE country = $1`, [
      "Cote d'Ivoire",
    ]);
    const expected = Number(reader.getRows()[0]![0]);
    assert.ok(expected > 0, "the fixture has Cote d'Ivoire rows");

    const rows = (await walkPages(service, `/v1/financials?metric=ggr&country=${enc("Cote d'Ivoire")}`, 1000)).flatMap((p) => p.data);
    assert.is(rows.length, expected);
    assert.ok(rows.every((r: any) => r.dimensions.country === "Cote d'Ivoire"));

    // An injection attempt beside it adds nothing.
    const mixed = await walkPages(service, `/v1/financials?metric=ggr&country=${enc("Cote d'Ivoire")}&country=${enc("' OR '1'='1")}`, 1000);
    assert.equal(
      mixed.flatMap((p) => p.data),
      rows,
    );
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
});

Literal.after(async () => {
  await service.stop();
});

Literal.run();
