import fs from 'node:fs/promises';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { DataQueryClient } from 'data-query-client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { generateRelease } from '../etl/generate.ts';
import { loadDrop } from '../etl/load.ts';
import { quoteIdent, quoteLiteral } from '../src/duckdb/sql-text.ts';
import { findDataset, INTEGER_DIMENSIONS } from '../src/registry.ts';
import { runQueryCli } from './helpers/query-cli.ts';
import { FIXTURE_RELEASE, startTestService, type TestService, tempDir } from './helpers/service.ts';

// /v1/facets against DuckDB counting the release's own Parquet files: for each
// dimension, GROUP BY it over the rows every other filter keeps, sorted by rows, then value.

interface Case {
  readonly metric: string;
  readonly query: string;
  /** dimension → values, as the query filters them (a period is `year` BETWEEN). */
  readonly filters: Record<string, readonly (string | number)[]>;
  readonly period?: readonly [number, number];
}

const CASES: Case[] = [
  { metric: 'ggr', query: '', filters: {} },
  { metric: 'ggr', query: 'country=France', filters: { country: ['France'] } },
  {
    metric: 'ggr',
    query: 'country=France&country=Spain&channel=Online&year=2020&year=2021',
    filters: { country: ['France', 'Spain'], channel: ['Online'], year: [2020, 2021] },
  },
  { metric: 'turnover', query: 'fx=USD&period=2010-01-01:2014-12-31', filters: { fx: ['USD'] }, period: [2010, 2014] },
  { metric: 'fx', query: 'region=Europe&temporal=Current', filters: { region: ['Europe'], temporal: ['Current'] } },
  { metric: 'country', query: 'country=Germany&year=2019', filters: { country: ['Germany'], year: [2019] } },
];

type Facet = { value: string | number; rows: number };

/** What /v1/facets must answer for `c`, counted by DuckDB over the release's file. */
async function expected(connection: DuckDBConnection, file: string, c: Case, max: number) {
  const def = findDataset(c.metric, 'financial')!;
  const data: Record<string, Facet[]> = {};
  const left: Record<string, number> = {};
  for (const dimension of def.dimensions) {
    const conditions = Object.entries(c.filters)
      .filter(([d]) => d !== dimension)
      .map(([d, values]) => `${quoteIdent(d)} IN (${values.map((x) => (typeof x === 'number' ? x : quoteLiteral(x))).join(', ')})`);
    if (c.period && dimension !== 'year') conditions.push(`year BETWEEN ${c.period[0]} AND ${c.period[1]}`);
    const reader = await connection.runAndReadAll(
      `SELECT ${quoteIdent(dimension)} AS v, count(*)::INTEGER AS n FROM read_parquet(${quoteLiteral(file)})
       ${conditions.length ? `WHERE ${conditions.join(' AND ')}` : ''} GROUP BY 1 ORDER BY n DESC, v`,
    );
    const all = reader.getRowsJS().map(([v, n]) => ({ value: INTEGER_DIMENSIONS.has(dimension) ? Number(v) : String(v), rows: Number(n) }));
    // DuckDB's ORDER BY v sorts text by its collation; the API by code units: compare as sets within equal counts.
    all.sort((a, b) => b.rows - a.rows || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
    data[dimension] = all.slice(0, max);
    left[dimension] = Math.max(0, all.length - max);
  }
  return { data, left };
}

async function checkCases(service: TestService, release: string, cases: readonly Case[], max: number) {
  const manifest = JSON.parse(await fs.readFile(path.join(service.dataDir, release, 'manifest.json'), 'utf8'));
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    for (const c of cases) {
      const url = `/v1/facets?metric=${c.metric}${c.query ? `&${c.query}` : ''}`;
      const res = await service.get(url);
      assert.is(res.status, 200, `${url}: ${res.text}`);
      const file = path.join(service.dataDir, release, manifest.datasets[c.metric].file);
      const want = await expected(connection, file, c, max);
      assert.equal(Object.keys(res.json.data), findDataset(c.metric, 'financial')!.dimensions, `${url}: every dimension, in order`);
      for (const [dimension, values] of Object.entries(want.data)) assert.equal(res.json.data[dimension], values, `${url}: ${dimension}`);
      assert.equal(res.json.meta.values_left_out, want.left, `${url}: values_left_out`);
      assert.is(res.json.meta.facet_values, max);
      assert.is(res.json.meta.release, release);
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

const generated = suite('facets: generated release');
let service: TestService;
generated.before(async () => {
  service = await startTestService();
});
generated.after(async () => service.stop());

generated('each dimension counted under every filter but its own, equal to DuckDB over the Parquet file', async () => {
  await checkCases(service, FIXTURE_RELEASE, CASES, 50);
});

generated('a picked value leaves its own dimension whole: the other countries keep their counts', async () => {
  const all = (await service.get('/v1/facets?metric=ggr&channel=Online')).json.data.country as Facet[];
  const [first] = all;
  const picked = (await service.get(`/v1/facets?metric=ggr&channel=Online&country=${encodeURIComponent(String(first!.value))}`)).json.data;
  assert.equal(picked.country, all);
  // The other dimensions narrow to that country's rows.
  assert.is(
    (picked.year as Facet[]).reduce((sum, f) => sum + f.rows, 0),
    first!.rows,
  );
});

generated('endpoint=aggregate: counts the rows the aggregate adds up, and names the national-totals rule it applied', async () => {
  const view = 'fx=USD&region=North+America&channel=Land';
  const agg = await service.get(`/v1/aggregate?metric=ggr&group_by=country&${view}`);
  assert.is(agg.status, 200, agg.text);
  assert.equal(agg.json.meta.filters_applied.state, ['']);
  const rowsOf = new Map(agg.json.data.map((g: any) => [g.dimensions.country, g.values.rows]));
  const counted = (await service.get(`/v1/facets?metric=ggr&endpoint=aggregate&group_by=country&${view}`)).json;
  assert.equal(counted.meta.totals_rule, { dimension: 'state', value: '', means: 'national totals' });
  assert.equal(counted.meta.filters_applied.state, ['']);
  const chips = counted.data.country as Facet[];
  assert.ok(chips.length > 1);
  for (const { value, rows } of chips) assert.is(rows, rowsOf.get(value), `${value}: the chip's count is the table's rows`);
  // The state chips still list every state: picking one is a filter that lifts the rule.
  assert.ok(
    (counted.data.state as Facet[]).some((f) => f.value !== ''),
    'states listed',
  );
  // Without it, or grouped by state, every row is counted and no rule is named.
  for (const query of [`metric=ggr&group_by=country&${view}`, `metric=ggr&endpoint=aggregate&group_by=country,state&${view}`]) {
    const all = (await service.get(`/v1/facets?${query}`)).json;
    assert.is(all.meta.totals_rule, undefined, query);
    const us = (all.data.country as Facet[]).find((f) => f.value === chips[0]!.value)!;
    assert.ok(us.rows > chips[0]!.rows, `${query}: the states' rows counted too`);
  }
  // The aggregate's refusals, from the same code.
  for (const [query, text] of [
    ['state=&state=Nevada', /Cannot add national totals/],
    ['group_by=product', /product/],
    ['endpoint=revisions', /endpoint/],
  ] as const) {
    const res = await service.get(`/v1/facets?metric=fx&endpoint=aggregate&${query}`);
    assert.is(res.status, 400, `${query}: ${res.text}`);
    assert.match(res.text, text);
  }
});

generated('cached like any answer: the same ETag, and 304 on If-None-Match', async () => {
  const first = await service.get('/v1/facets?metric=ggr&country=Spain');
  const again = await service.get('/v1/facets?metric=ggr&country=Spain');
  assert.is(again.text, first.text);
  assert.is(again.headers.etag, first.headers.etag);
  const revalidated = await service.get('/v1/facets?metric=ggr&country=Spain', {
    headers: { 'if-none-match': String(first.headers.etag) },
  });
  assert.is(revalidated.status, 304);
});

generated('a value the release does not hold: a warning, its own dimension still counted, the others empty', async () => {
  const res = await service.get('/v1/facets?metric=ggr&country=france');
  assert.is(res.status, 200, res.text);
  assert.match(res.json.meta.warnings[0], /country "france" matches no value; did you mean "France"\?/);
  assert.ok(res.json.data.country.length > 0);
  assert.equal(res.json.data.year, []);
});

generated('bad input: the same errors as /v1/financials, and nothing run', async () => {
  const cases: [string, number, RegExp][] = [
    ['/v1/facets', 400, /metric/],
    ['/v1/facets?metric=nope', 400, /metric/],
    ['/v1/facets?metric=fx&product=Casino', 400, /product/],
    ['/v1/facets?metric=ggr&year=20x4', 400, /year/],
    ['/v1/facets?metric=ggr&release=1999-01', 404, /1999-01/],
  ];
  for (const [url, status, text] of cases) {
    const res = await service.get(url);
    assert.is(res.status, status, `${url}: ${res.text}`);
    assert.match(res.text, text, url);
  }
  assert.is((await service.get('/v1/facets?metric=ggr', { key: null })).status, 401);
});

generated('the typed client and the query CLI give the same answer as HTTP', async () => {
  const http = (await service.get('/v1/facets?metric=ggr&channel=Online&year=2020&year=2021')).json;
  const client = new DataQueryClient({ baseUrl: service.url, apiKey: service.key });
  assert.equal(await client.facets('ggr', { channel: 'Online', year: [2020, 2021] }), http);
  const cli = await runQueryCli(['facets', 'ggr', '--channel', 'Online', '--year', '2020', '--year', '2021'], {
    DQS_URL: service.url,
    DQS_API_KEY: service.key,
  });
  assert.is(cli.code, 0, cli.stderr);
  assert.equal(JSON.parse(cli.stdout.toString('utf8')), http);
});

// A release with gaps: France has no rows for 2020-2022, Africa no online rows, and few values are listed.
const gaps = suite('facets: a release with gaps');
let gapService: TestService;
let gapDir: string;
const GAP_RELEASE = '2026-03';
gaps.before(async () => {
  const drop = await tempDir('dqs-facets-drop-');
  gapDir = await tempDir('dqs-facets-data-');
  await generateRelease({ out: drop, seed: 11, scale: 0.02, release: GAP_RELEASE });
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  for (const name of ['ggr', 'turnover']) {
    const file = path.join(drop, `${name}.parquet`);
    const kept = `${file}.kept`;
    await connection.run(
      `COPY (SELECT * FROM read_parquet(${quoteLiteral(file)}) WHERE NOT (country = 'France' AND year BETWEEN 2020 AND 2022)
         AND NOT (region = 'Africa' AND channel = 'Online')) TO ${quoteLiteral(kept)} (FORMAT parquet)`,
    );
    await fs.rename(kept, file);
  }
  connection.closeSync();
  instance.closeSync();
  await loadDrop({ drop, dataDir: gapDir, release: GAP_RELEASE, force: true, minYear: 1990, maxYear: 2100, maxRowChange: 1 });
  await fs.rm(drop, { recursive: true, force: true });
  gapService = await startTestService({ dataDir: gapDir, env: { FACET_VALUES: '5' } });
});
gaps.after(async () => {
  await gapService.stop();
  await fs.rm(gapDir, { recursive: true, force: true });
});

gaps('counts equal DuckDB, the missing years and channels absent, at most FACET_VALUES listed', async () => {
  await checkCases(
    gapService,
    GAP_RELEASE,
    [
      ...CASES,
      { metric: 'ggr', query: 'country=France', filters: { country: ['France'] } },
      { metric: 'ggr', query: 'region=Africa&year=2021', filters: { region: ['Africa'], year: [2021] } },
    ],
    5,
  );
  const france = (await gapService.get('/v1/facets?metric=ggr&country=France')).json;
  assert.ok(!france.data.year.some((f: Facet) => [2020, 2021, 2022].includes(f.value as number)), 'no year France lacks');
  const africa = (await gapService.get('/v1/facets?metric=ggr&region=Africa')).json;
  assert.ok(!africa.data.channel.some((f: Facet) => f.value === 'Online'), 'no online rows in Africa');
  assert.ok(africa.meta.values_left_out.country > 0, 'more African countries than FACET_VALUES');
});

generated.run();
gaps.run();
