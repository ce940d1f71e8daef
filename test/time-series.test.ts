import fs from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { groupKey } from './helpers/derived-reference.ts';
import { duckdb, publishDrop } from './helpers/drop.ts';
import { openApi } from './helpers/openapi.ts';
import { expectedSeries, near, type SeriesCase } from './helpers/series-reference.ts';
import { FIXTURE_RELEASE, startTestService, type TestService, walkPages } from './helpers/service.ts';

// /v1/aggregate's time series (issue 45): index, cagr, latest and shape=wide, each
// value against DuckDB over DECIMAL sums (test/helpers/series-reference.ts) on the
// generated release and on a drop with gaps; wide against long in every format; the
// combinations and the refusals.

const USD = "fx = 'USD' AND state = ''";

const CASES: SeriesCase[] = [
  {
    name: 'online GGR by region indexed to 2019, the base year outside the period',
    metric: 'ggr',
    query: 'group_by=region,year&fx=USD&channel=Online&period=2020-01-01:2024-12-31&index=2019',
    groupBy: ['region', 'year'],
    metrics: ['ggr'],
    where: `${USD} AND channel = 'Online'`,
    years: 'year BETWEEN 2020 AND 2024',
    index: 2019,
  },
  {
    name: 'index by country and channel, two years filtered, one of them the base',
    metric: 'ggr',
    query: 'group_by=country,channel,year&fx=EUR&year=2018&year=2022&index=2018',
    groupBy: ['country', 'channel', 'year'],
    metrics: ['ggr'],
    where: "fx = 'EUR' AND state = ''",
    years: 'year IN (2018, 2022)',
    index: 2018,
  },
  {
    name: 'world GGR by year indexed to 2010',
    metric: 'ggr',
    query: 'group_by=year&fx=USD&period=2015-01-01:2024-12-31&index=2010',
    groupBy: ['year'],
    metrics: ['ggr'],
    where: USD,
    years: 'year BETWEEN 2015 AND 2024',
    index: 2010,
  },
  {
    name: 'CAGR by country over 2015-2024 with the year filter on 2020',
    metric: 'ggr',
    query: 'group_by=country&fx=USD&year=2020&cagr=2015:2024',
    groupBy: ['country'],
    metrics: ['ggr'],
    where: USD,
    years: 'year = 2020',
    cagr: [2015, 2024],
  },
  {
    name: 'world CAGR, no group_by',
    metric: 'turnover',
    query: 'fx=USD&cagr=2010:2020',
    groupBy: [],
    metrics: ['turnover'],
    where: USD,
    cagr: [2010, 2020],
  },
  {
    name: 'CAGR by region and channel over two years',
    metric: 'ggr',
    query: 'group_by=region,channel&fx=EUR&cagr=2019:2021',
    groupBy: ['region', 'channel'],
    metrics: ['ggr'],
    where: "fx = 'EUR' AND state = ''",
    cagr: [2019, 2021],
  },
  {
    name: 'CAGR of GDP and adults by region; the inflation average gets none',
    metric: 'country',
    query: 'group_by=region&measure=gdp_usd&measure=adult_population&cagr=2010:2020',
    groupBy: ['region'],
    metrics: ['gdp_usd', 'adult_population'],
    where: "state = ''",
    cagr: [2010, 2020],
  },
  {
    name: 'the latest two reported years of each country',
    metric: 'ggr',
    query: 'group_by=country,year&fx=USD&temporal=Current&latest=2',
    groupBy: ['country', 'year'],
    metrics: ['ggr'],
    where: `${USD} AND temporal = 'Current'`,
    latest: 2,
  },
  {
    name: 'the latest three years by region and channel, indexed to 2015',
    metric: 'ggr',
    query: 'group_by=region,channel,year&fx=USD&period=2010-01-01:2030-12-31&latest=3&index=2015',
    groupBy: ['region', 'channel', 'year'],
    metrics: ['ggr'],
    where: USD,
    years: 'year BETWEEN 2010 AND 2030',
    latest: 3,
    index: 2015,
  },
];

/** The case's answer, walked, beside DuckDB's: every group, every key, and latest's cut. */
async function compareCase(service: TestService, connection: DuckDBConnection, releaseDir: string, c: SeriesCase): Promise<any[]> {
  const pages = await walkPages(service, `/v1/aggregate?metric=${c.metric}&${c.query}`, 1000);
  const served = pages.flatMap((p) => p.data);
  const want = await expectedSeries(connection, releaseDir, c);
  assert.ok(served.length > 0, `${c.name}: some groups`);
  assert.is(served.length, want.groups.size, `${c.name}: groups`);
  const { meta } = pages[0];
  if (c.latest !== undefined) assert.equal(meta.latest, { n: c.latest, cut: want.cut }, `${c.name}: meta.latest`);
  if (c.index !== undefined) assert.is(meta.index, c.index);
  if (c.cagr) assert.equal(meta.cagr, { from: c.cagr[0], to: c.cagr[1], years: c.cagr[1] - c.cagr[0] });
  for (const row of served) {
    const key = groupKey(row.dimensions, c.groupBy);
    const expected = want.groups.get(key);
    assert.ok(expected, `${c.name}: group ${key} is DuckDB's`);
    for (const [name, value] of Object.entries(expected!)) {
      assert.ok(near(row.values[name] ?? null, value), `${c.name}: ${key} ${name} = ${row.values[name]}, DuckDB ${value}`);
    }
  }
  return served;
}

let service: TestService;
const values = suite('time series: values on the generated release');
values.before(async () => {
  service = await startTestService();
});
values.after(() => service.stop());

values('every case equals DuckDB over the Parquet files, DECIMAL sums', async () => {
  await duckdb(async (connection) => {
    const dir = path.join(service.dataDir, FIXTURE_RELEASE);
    for (const c of CASES) {
      const served = await compareCase(service, connection, dir, c);
      const derived = Object.keys(served[0].values).filter((k) => /_(index|cagr)$/.test(k));
      if (c.index !== undefined || c.cagr)
        assert.ok(
          served.some((row) => derived.every((k) => row.values[k] !== null)),
          c.name,
        );
    }
  });
});

values('the index is exactly 100 in the base year, and the base is read whatever the filters say', async () => {
  const base = '/v1/aggregate?metric=ggr&group_by=region,year&fx=USD';
  const inWindow = (await walkPages(service, `${base}&period=2019-01-01:2021-12-31&index=2019`, 1000)).flatMap((p) => p.data);
  for (const row of inWindow.filter((g) => g.dimensions.year === 2019)) assert.is(row.values.ggr_sum_index, 100, row.dimensions.region);
  const outside = (await walkPages(service, `${base}&year=2021&index=2019`, 1000)).flatMap((p) => p.data);
  assert.ok(
    outside.every((g) => g.dimensions.year === 2021),
    'the base year is read, not shown',
  );
  for (const row of outside) {
    const same = inWindow.find((g) => g.dimensions.region === row.dimensions.region && g.dimensions.year === 2021);
    assert.is(row.values.ggr_sum_index, same.values.ggr_sum_index, row.dimensions.region);
  }
});

values('combined with compare, share, per, having and order: each value is what it is alone', async () => {
  const base = 'metric=ggr&fx=USD&period=2018-01-01:2024-12-31';
  const all = `${base}&group_by=region,year&compare=previous_year&share=region&per=adult_population&index=2019`;
  const every = (await walkPages(service, `/v1/aggregate?${all}`, 1000)).flatMap((p) => p.data);
  const combined = (
    await walkPages(service, `/v1/aggregate?${all}&latest=2&having=ggr_sum_index.gt.50&order=-ggr_sum_index`, 1000)
  ).flatMap((p) => p.data);
  assert.ok(combined.length > 0);
  // The latest two years that exist, before having: each kept group is among the answer's and keeps every value.
  const latestYears = new Map<string, number[]>();
  for (const g of every) latestYears.set(g.dimensions.region, [...(latestYears.get(g.dimensions.region) ?? []), g.dimensions.year]);
  for (const row of combined) {
    const years = latestYears
      .get(row.dimensions.region)!
      .sort((a, b) => b - a)
      .slice(0, 2);
    assert.ok(years.includes(row.dimensions.year), `${row.dimensions.region} ${row.dimensions.year} is one of its latest two`);
    assert.ok(row.values.ggr_sum_index > 50);
    const alone = every.find((g) => g.dimensions.region === row.dimensions.region && g.dimensions.year === row.dimensions.year);
    assert.equal(row.values, alone.values);
  }
  const indexes = combined.map((g) => g.values.ggr_sum_index);
  assert.equal(
    indexes,
    [...indexes].sort((a, b) => b - a),
  );
  const cagr = (await service.get(`/v1/aggregate?${base}&group_by=region&cagr=2018:2024&share=all&per=adult_population`)).json;
  assert.equal(cagr.meta.measures, [
    'ggr_sum',
    'ggr_sum_share',
    'ggr_sum_per_adult_population',
    'ggr_sum_from',
    'ggr_sum_to',
    'ggr_sum_cagr',
  ]);
});

values('rollup: index and CAGR on subtotal rows, each from its own sums', async () => {
  for (const [query, groupBy] of [
    ['metric=ggr&fx=USD&period=2020-01-01:2024-12-31&index=2019&group_by=', ['year', 'region', 'channel']],
    ['metric=ggr&fx=USD&cagr=2015:2024&group_by=', ['region', 'channel']],
  ] as const) {
    const rolled = (await walkPages(service, `/v1/aggregate?${query}${groupBy.join(',')}&rollup=true`, 1000)).flatMap((p) => p.data);
    for (let keep = groupBy.length; keep >= 1; keep--) {
      const dims = groupBy.slice(0, keep);
      const plain = (await walkPages(service, `/v1/aggregate?${query}${dims.join(',')}`, 1000)).flatMap((p) => p.data);
      const level = rolled.filter((g) => groupBy.every((d, i) => (i < keep ? g.dimensions[d] !== null : g.dimensions[d] === null)));
      assert.is(level.length, plain.length, dims.join(','));
      for (const row of plain) {
        const match = level.find((g) => dims.every((d) => g.dimensions[d] === row.dimensions[d]));
        assert.equal(match?.values, row.values, `${dims.join(',')}: ${JSON.stringify(row.dimensions)}`);
      }
    }
  }
});

values('shape=wide holds the long answer value for value, in JSON, CSV and Arrow, across pages', async () => {
  const query = 'metric=ggr&group_by=region,channel,year&fx=USD&period=2017-01-01:2021-12-31&compare=previous_year&index=2018';
  const long = (await walkPages(service, `/v1/aggregate?${query}`, 1000)).flatMap((p) => p.data);
  const keys: string[] = (await service.get(`/v1/aggregate?${query}&limit=1`)).json.meta.measures;
  const widePath = `/v1/aggregate?${query}&shape=wide`;
  const pages = await walkPages(service, widePath, 7);
  const wide = pages.flatMap((p) => p.data);
  assert.equal(
    wide,
    (await walkPages(service, widePath, 1000)).flatMap((p) => p.data),
    'paging walks to the same rows',
  );
  const years = [2017, 2018, 2019, 2020, 2021];
  assert.equal(pages[0].meta.years, years);
  assert.is(pages[0].meta.shape, 'wide');
  const columns = keys.flatMap((k) => years.map((y) => `${k}_${y}`));
  assert.equal(pages[0].meta.measures, columns, 'each key, then its years ascending');
  assert.is(wide.length, new Set(long.map((g) => `${g.dimensions.region}|${g.dimensions.channel}`)).size);
  for (const row of wide) {
    assert.equal(Object.keys(row.dimensions), ['region', 'channel']);
    const mine = long.filter((g) => g.dimensions.region === row.dimensions.region && g.dimensions.channel === row.dimensions.channel);
    for (const year of years) {
      const at = mine.find((g) => g.dimensions.year === year);
      for (const k of keys)
        assert.is(row.values[`${k}_${year}`], at ? at.values[k] : null, `${JSON.stringify(row.dimensions)} ${k} ${year}`);
    }
    assert.is(
      row.values.rows,
      mine.reduce((n, g) => n + g.values.rows, 0),
    );
  }
  const flat = wide.map((r: any) => ({ ...r.dimensions, ...r.values }));
  const csv = await service.get(`${widePath}&limit=1000&format=csv`);
  const lines = csv.text.trimEnd().split('\r\n');
  assert.is(lines[0], ['region', 'channel', ...columns, 'rows'].join(','));
  lines.slice(1).forEach((line, i) => {
    const fields = line.split(',');
    const want = [flat[i].region, flat[i].channel, ...columns.map((c) => flat[i][c]), flat[i].rows];
    assert.equal(
      fields.map((f, j) => (j < 2 ? f : f === '' ? null : Number(f))),
      want,
      `CSV row ${i}`,
    );
  });
  const res = await fetch(`${service.url}${widePath}&limit=1000`, {
    headers: { 'x-api-key': service.key, accept: 'application/vnd.apache.arrow.stream' },
  });
  const table = tableFromIPC(new Uint8Array(await res.arrayBuffer()));
  assert.equal(
    table.schema.fields.map((f) => `${f.name}:${f.type}`),
    ['region:Utf8', 'channel:Utf8', ...columns.map((c) => `${c}:Float64`), 'rows:Int32'],
  );
  assert.equal(
    table.toArray().map((r) => r.toJSON()),
    flat,
  );
});

values('shape=wide: order and having take the wide keys; latest cuts before the pivot', async () => {
  const base = '/v1/aggregate?metric=ggr&group_by=country,year&fx=USD&period=2022-01-01:2024-12-31&shape=wide';
  const top = (await service.get(`${base}&order=-ggr_sum_2024&having=ggr_sum_2023.gt.1e8&limit=5`)).json.data;
  assert.ok(top.length > 0);
  assert.ok(top.every((r: any) => r.values.ggr_sum_2023 > 1e8));
  const tops = top.map((r: any) => r.values.ggr_sum_2024);
  assert.equal(
    tops,
    [...tops].sort((a: number, b: number) => b - a),
  );
  const absent = await service.get(`${base}&having=ggr_sum_1990.gt.0`);
  assert.is(absent.status, 200);
  assert.equal(absent.json.data, [], 'a year without a column is null throughout, and null passes nothing');
  const latest = (await service.get(`${base}&latest=1&limit=1000`)).json;
  for (const row of latest.data) {
    const known = latest.meta.years.filter((y: number) => row.values[`ggr_sum_${y}`] !== null);
    assert.is(known.length, 1, row.dimensions.country);
  }
});

values('a cursor belongs to one series request', async () => {
  const base = 'metric=ggr&group_by=region,year&fx=USD&index=2019&latest=3';
  const first = await service.get(`/v1/aggregate?${base}&limit=3`);
  const cursor = encodeURIComponent(first.json.pagination.cursor);
  for (const other of [base.replace('2019', '2018'), base.replace('latest=3', 'latest=4'), `${base}&shape=wide`]) {
    const res = await service.get(`/v1/aggregate?${other}&limit=3&cursor=${cursor}`);
    assert.equal(res.json, { error: 'Invalid pagination cursor' }, other);
  }
  const cagr = await service.get('/v1/aggregate?metric=ggr&group_by=region&fx=USD&cagr=2015:2024&limit=2');
  const next = encodeURIComponent(cagr.json.pagination.cursor);
  const res = await service.get(`/v1/aggregate?metric=ggr&group_by=region&fx=USD&cagr=2016:2024&limit=2&cursor=${next}`);
  assert.is(res.status, 400);
});

values('refusals: each is a 400 that names the conflict or the fix', async () => {
  const refused: Array<[string, string]> = [
    [
      'group_by=region&index=2019',
      "Cannot use index without year in group_by (it reads each group's years side by side): add year to group_by",
    ],
    [
      'group_by=region&latest=2',
      "Cannot use latest without year in group_by (it reads each group's years side by side): add year to group_by",
    ],
    [
      'group_by=region&shape=wide',
      "Cannot use shape=wide without year in group_by (it reads each group's years side by side): add year to group_by",
    ],
    [
      'group_by=region,year&cagr=2015:2024',
      "Cannot take cagr with year in group_by (each group's growth spans its two years): leave year out of group_by",
    ],
    [
      'group_by=region,year&cagr=2015:2024&index=2019',
      'Cannot combine cagr with index: cagr needs year out of group_by and index needs it in; leave out cagr or index',
    ],
    [
      'group_by=region&cagr=2015:2024&latest=1',
      'Cannot combine cagr with latest: cagr needs year out of group_by and latest needs it in; leave out cagr or latest',
    ],
    [
      'group_by=region&cagr=2015:2024&shape=wide',
      'Cannot combine cagr with shape=wide: cagr needs year out of group_by and shape=wide needs it in; leave out cagr or shape=wide',
    ],
    [
      'group_by=region&cagr=2015:2024&compare=previous_year',
      'Cannot combine cagr with compare: cagr needs year out of group_by and compare needs it in; leave out cagr or compare',
    ],
    [
      'group_by=region,year&latest=2&rollup=true',
      'Cannot combine latest with rollup=true (a subtotal would add up different years for each of its groups): leave out rollup or latest',
    ],
    [
      'group_by=region,year&shape=wide&rollup=true',
      'Cannot combine shape=wide with rollup=true (a subtotal over the years has no year column to go in): leave out rollup or shape=wide',
    ],
    [
      'group_by=region,year&index=2019&measure=ggr:avg',
      'Cannot take an index of ggr:avg: index applies to sums; measure ggr:sum or leave index out',
    ],
    [
      'group_by=region&cagr=2015:2024&measure=ggr:max',
      'Cannot take a growth rate of ggr:max: cagr applies to sums; measure ggr:sum or leave cagr out',
    ],
    [
      'group_by=region,year&shape=wide&order=year',
      'Invalid order "year": use one of region, ggr_sum_<year>, rows, with a leading - for descending',
    ],
    ['group_by=region,year&shape=wide&having=ggr_sum.gt.0', 'Invalid having "ggr_sum.gt.0": the key must be one of ggr_sum_<year>, rows'],
  ];
  for (const [query, error] of refused) {
    const res = await service.get(`/v1/aggregate?metric=ggr&fx=USD&${query}`);
    assert.is(res.status, 400, query);
    assert.equal(res.json, { error }, query);
  }
  const fields: Array<[string, string, string]> = [
    ['index=19', 'index', 'Expected a year, e.g. 2019'],
    ['cagr=2024:2015', 'cagr', 'Expected <from>:<to>, two years with from before to, e.g. 2015:2024'],
    ['cagr=2015:2015', 'cagr', 'Expected <from>:<to>, two years with from before to, e.g. 2015:2024'],
    ['cagr=2015', 'cagr', 'Expected <from>:<to>, two years with from before to, e.g. 2015:2024'],
    ['latest=0', 'latest', 'Expected an integer from 1 to 50'],
    ['latest=51', 'latest', 'Expected an integer from 1 to 50'],
    ['shape=tall', 'shape', 'Expected long or wide'],
    ['index=2019&index=2020', 'index', 'Expected a single value, received several'],
  ];
  for (const [query, field, message] of fields) {
    const res = await service.get(`/v1/aggregate?metric=ggr&fx=USD&group_by=year&${query}`);
    assert.is(res.status, 400, query);
    assert.equal(res.json.details.fieldErrors[field], [message], query);
  }
});

values("OpenAPI: each parameter's enum or pattern and example, and each example request works", async () => {
  const params = new Map<string, any>(openApi.paths['/v1/aggregate'].get.parameters.map((p: any) => [p.name, p]));
  assert.equal(params.get('shape').schema.enum, ['long', 'wide']);
  for (const name of ['index', 'cagr', 'latest', 'shape']) {
    const p = params.get(name);
    // Not pre-filled (Swagger fills the operation's example request only): named examples after "not sent", each with its request.
    const examples = Object.values<any>(p.examples ?? {}).filter((e) => e.value !== undefined);
    assert.ok(examples.length >= 2, `${name} has two examples`);
    assert.ok(p.description.includes(examples[0]['x-request']), `${name}'s description shows its first example's request`);
    for (const { value, 'x-request': example } of examples) {
      assert.ok(example.includes(`${name}=${value}`), `${name}: the request sends the example`);
      const res = await service.get(example);
      assert.is(res.status, 200, `${example}: ${res.text}`);
      assert.ok(res.json.data.length > 0, example);
    }
  }
  const { derived } = (await service.get('/v1/catalog')).json;
  for (const suffix of ['_index', '_from', '_to', '_cagr', '_<year>']) assert.ok(derived[suffix], `the catalog states ${suffix}`);
  assert.match(derived._cagr, /fraction/);
});

// A drop as another tool writes it, with the gaps series must meet: Borduria has no
// rows in 2019 (the base year) nor 2020; Carpania's online GGR is 0 in 2015 and 2019;
// Dakota stops reporting after 2022 and Erewhon starts in 2018; Atlantis's land GGR
// turns negative in 2024 (a write-down), so its CAGR has no real root.
const drop = suite('time series: a drop written by plain DuckDB');
let dropService: TestService;
let dropDir: string;
const DROP_RELEASE = '2026-03';
drop.before(async () => {
  const geo = `(VALUES ('Europe', 'Atlantis'), ('Europe', 'Borduria'), ('Asia - ME', 'Carpania'), ('North America', 'Dakota'), ('Africa', 'Erewhon')) AS g(region, country)`;
  const grid = `FROM ${geo}, range(2015, 2025) AS y(year), (VALUES ('Online'), ('Land')) AS c(channel), (VALUES ('USD'), ('EUR')) AS f(fx), (VALUES ('Poker'), ('Slots')) AS p(product)`;
  const market = `SELECT year::INTEGER AS year, region, country, '' AS state, 'Gaming' AS category, product, channel, 'Onshore' AS sub_channel, fx, 'Current' AS temporal, 'Reported' AS calculation,
    CASE WHEN country = 'Carpania' AND channel = 'Online' AND year IN (2015, 2019) THEN 0
         WHEN country = 'Atlantis' AND channel = 'Land' AND year = 2024 THEN -7.25
         ELSE (year - 2010) * 10.3 + length(country) * 1.7 + (channel = 'Online')::INT * 5.5 + (product = 'Slots')::INT / 7 + (fx = 'EUR')::INT * 0.9 END::DOUBLE AS ggr
    ${grid} WHERE NOT (country = 'Borduria' AND year IN (2019, 2020)) AND NOT (country = 'Dakota' AND year > 2022) AND NOT (country = 'Erewhon' AND year < 2018)`;
  const sql: Record<string, string> = {
    ggr: market,
    turnover: `SELECT * EXCLUDE (ggr), abs(ggr) * 9.25 + 1 / 3 AS turnover FROM (${market})`,
    fx: `SELECT DISTINCT year::INTEGER AS year, region, country, '' AS state, 'XOF' AS fx_local_currency, 'Current' AS temporal, 'Reported' AS calculation, 0.5 AS fx_constant_usd, 0.6 AS fx_current_eur, 0.7 AS fx_constant_eur, 0.8 AS fx_current_usd ${grid}`,
    country: `SELECT DISTINCT year::INTEGER AS year, region, country, '' AS state, 'Current' AS temporal, 'Reported' AS calculation, 1e6 * year AS gdp_local_currency,
      (1e9 + length(country) * 1e7 + year * 1e5 / 3)::DOUBLE AS gdp_usd, (1e5 + length(country) * 1e3 + year)::BIGINT AS adult_population, 2.5 AS inflation ${grid}`,
    country_reference: `SELECT DISTINCT region, country, 'Tracked' AS country_type FROM ${geo}`,
  };
  dropDir = await publishDrop(sql, DROP_RELEASE);
  dropService = await startTestService({ dataDir: dropDir });
});
drop.after(async () => {
  await dropService.stop();
  await fs.rm(dropDir, { recursive: true, force: true });
});

const DROP_CASES: SeriesCase[] = [
  {
    name: 'index to 2019 by country and channel: a missing base, a zero base',
    metric: 'ggr',
    query: 'group_by=country,channel,year&fx=USD&period=2020-01-01:2024-12-31&index=2019',
    groupBy: ['country', 'channel', 'year'],
    metrics: ['ggr'],
    where: USD,
    years: 'year BETWEEN 2020 AND 2024',
    index: 2019,
  },
  {
    name: 'CAGR 2015:2024 by country and channel: missing years, a zero start, a negative end',
    metric: 'ggr',
    query: 'group_by=country,channel&fx=EUR&year=2021&cagr=2015:2024',
    groupBy: ['country', 'channel'],
    metrics: ['ggr'],
    where: "fx = 'EUR' AND state = ''",
    years: 'year = 2021',
    cagr: [2015, 2024],
  },
  {
    name: 'the latest three years of each country, whose latest years differ',
    metric: 'ggr',
    query: 'group_by=country,year&fx=USD&latest=3',
    groupBy: ['country', 'year'],
    metrics: ['ggr'],
    where: USD,
    latest: 3,
  },
];

drop('every case equals DuckDB over the published files', async () => {
  await duckdb(async (connection) => {
    for (const c of DROP_CASES) await compareCase(dropService, connection, path.join(dropDir, DROP_RELEASE), c);
  });
});

drop('the gaps show as nulls, and latest keeps each country its own latest years', async () => {
  const index = (await dropService.get('/v1/aggregate?metric=ggr&group_by=country,channel,year&fx=USD&year=2022&index=2019')).json.data;
  const at = (rows: any[], country: string, channel: string) =>
    rows.find((g: any) => g.dimensions.country === country && g.dimensions.channel === channel).values;
  assert.is(at(index, 'Borduria', 'Online').ggr_sum_index, null, 'no 2019 rows: no base');
  assert.is(at(index, 'Carpania', 'Online').ggr_sum_index, null, 'a base of 0');
  assert.ok(at(index, 'Carpania', 'Land').ggr_sum_index > 100);
  const cagr = (await dropService.get('/v1/aggregate?metric=ggr&group_by=country,channel&fx=USD&cagr=2015:2024')).json.data;
  assert.equal(at(cagr, 'Carpania', 'Online').ggr_sum_from, 0);
  assert.is(at(cagr, 'Carpania', 'Online').ggr_sum_cagr, null, 'from 0: no growth rate');
  assert.is(at(cagr, 'Dakota', 'Land').ggr_sum_to, null, 'no 2024 rows');
  assert.is(at(cagr, 'Dakota', 'Land').ggr_sum_cagr, null);
  assert.is(at(cagr, 'Erewhon', 'Land').ggr_sum_from, null, 'no 2015 rows');
  assert.ok(at(cagr, 'Atlantis', 'Land').ggr_sum_to < 0);
  assert.is(at(cagr, 'Atlantis', 'Land').ggr_sum_cagr, null, 'a negative end has no real root');
  const latest = (await dropService.get('/v1/aggregate?metric=ggr&group_by=country,year&fx=USD&latest=1')).json;
  assert.equal(
    latest.data.map((g: any) => [g.dimensions.country, g.dimensions.year]),
    [
      ['Atlantis', 2024],
      ['Borduria', 2024],
      ['Carpania', 2024],
      ['Dakota', 2022],
      ['Erewhon', 2024],
    ],
  );
  assert.equal(latest.meta.latest, { n: 1, cut: 9 + 7 + 9 + 7 + 6 });
  const wide = (await dropService.get('/v1/aggregate?metric=ggr&group_by=country,year&fx=USD&shape=wide&latest=2')).json;
  assert.equal(wide.meta.years, [2021, 2022, 2023, 2024]);
  const dakota = wide.data.find((g: any) => g.dimensions.country === 'Dakota').values;
  assert.equal([dakota.ggr_sum_2023, dakota.ggr_sum_2024], [null, null]);
  assert.ok(dakota.ggr_sum_2021 > 0 && dakota.ggr_sum_2022 > 0);
});

values.run();
drop.run();
