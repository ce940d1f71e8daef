import fs from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { quoteLiteral } from '../src/duckdb/sql-text.ts';
import { close, type DerivedCase, expectedGroups, expectedUnmatched, groupKey } from './helpers/derived-reference.ts';
import { duckdb, publishDrop } from './helpers/drop.ts';
import { writtenSum } from './helpers/exact-sum.ts';
import { runQueryCli } from './helpers/query-cli.ts';
import { bodiesPerThreads, FIXTURE_RELEASE, startTestService, type TestService, tempDir, walkPages } from './helpers/service.ts';

// /v1/aggregate's derived measures against DuckDB computing each one from
// the release's Parquet files (test/helpers/derived-reference.ts): exact DECIMAL
// sums, the previous year by a window over the year's value, shares by a window over
// the total, ratios by a join on the denominator's keys; equal to 1e-12 relative.

const USD = "fx = 'USD' AND state = ''";

const CASES: DerivedCase[] = [
  {
    name: 'YoY growth of online GGR by region, 2020-2024',
    metric: 'ggr',
    query: 'group_by=region,year&fx=USD&channel=Online&period=2020-01-01:2024-12-31&compare=previous_year',
    groupBy: ['region', 'year'],
    measures: { ggr_sum: ['ggr', 'sum'] },
    where: `${USD} AND channel = 'Online'`,
    years: 'year BETWEEN 2020 AND 2024',
    compare: true,
  },
  {
    name: 'compare of a sum, an average and a maximum, two years filtered',
    metric: 'turnover',
    query:
      'group_by=country,year&fx=EUR&year=2021&year=2022&measure=turnover:sum&measure=turnover:avg&measure=turnover:max&compare=previous_year',
    groupBy: ['country', 'year'],
    measures: { turnover_sum: ['turnover', 'sum'], turnover_avg: ['turnover', 'avg'], turnover_max: ['turnover', 'max'] },
    where: "fx = 'EUR' AND state = ''",
    years: 'year IN (2021, 2022)',
    compare: true,
  },
  {
    name: 'online share of GGR by country: the channel filter does not narrow the total',
    metric: 'ggr',
    query: 'group_by=country,channel&fx=USD&year=2024&channel=Online&share=channel',
    groupBy: ['country', 'channel'],
    measures: { ggr_sum: ['ggr', 'sum'] },
    where: USD,
    years: 'year = 2024',
    shareWhere: "channel = 'Online'",
    share: 'channel',
  },
  {
    name: 'channel mix of each region: shares summing to 1 per region',
    metric: 'ggr',
    query: 'group_by=region,channel&fx=EUR&year=2023&share=channel',
    groupBy: ['region', 'channel'],
    measures: { ggr_sum: ['ggr', 'sum'] },
    where: "fx = 'EUR' AND state = ''",
    years: 'year = 2023',
    share: 'channel',
  },
  {
    name: 'share of the grand total, by category and product',
    metric: 'turnover',
    query: 'group_by=category,product&fx=USD&year=2020&share=all',
    groupBy: ['category', 'product'],
    measures: { turnover_sum: ['turnover', 'sum'] },
    where: USD,
    years: 'year = 2020',
    share: 'all',
  },
  {
    name: 'share of the grand total grouped by state: the national rows make the total',
    metric: 'ggr',
    query: 'group_by=country,state&fx=USD&year=2022&country=United%20States&country=Canada&share=all',
    groupBy: ['country', 'state'],
    measures: { ggr_sum: ['ggr', 'sum'] },
    where: "fx = 'USD' AND country IN ('United States', 'Canada')",
    years: 'year = 2022',
    share: 'all',
  },
  {
    name: "each state's share of its national total",
    metric: 'ggr',
    query: 'group_by=country,state&fx=USD&year=2021&country=United%20States&share=state',
    groupBy: ['country', 'state'],
    measures: { ggr_sum: ['ggr', 'sum'] },
    where: "fx = 'USD' AND country = 'United States'",
    years: 'year = 2021',
    share: 'state',
  },
  {
    name: 'GGR per adult by country in 2024',
    metric: 'ggr',
    query: 'group_by=country&fx=USD&year=2024&per=adult_population',
    groupBy: ['country'],
    measures: { ggr_sum: ['ggr', 'sum'] },
    where: USD,
    years: 'year = 2024',
    per: 'adult_population',
  },
  {
    name: "GGR as a fraction of GDP by region and channel (each country's GDP once per channel)",
    metric: 'ggr',
    query: 'group_by=region,channel&fx=USD&year=2024&per=gdp_usd',
    groupBy: ['region', 'channel'],
    measures: { ggr_sum: ['ggr', 'sum'] },
    where: USD,
    years: 'year = 2024',
    per: 'gdp_usd',
  },
  {
    name: 'GGR per adult by state',
    metric: 'ggr',
    query: 'group_by=country,state&fx=USD&period=2021-01-01:2022-12-31&region=North%20America&per=adult_population',
    groupBy: ['country', 'state'],
    measures: { ggr_sum: ['ggr', 'sum'] },
    where: "fx = 'USD' AND region = 'North America'",
    years: 'year BETWEEN 2021 AND 2022',
    per: 'adult_population',
  },
  {
    name: 'hold by product (turnover lined up with ggr)',
    metric: 'ggr',
    query: 'group_by=product&fx=USD&year=2024&per=turnover',
    groupBy: ['product'],
    measures: { ggr_sum: ['ggr', 'sum'] },
    where: USD,
    years: 'year = 2024',
    per: 'turnover',
  },
  {
    name: 'GDP per adult by region, from the country dataset itself',
    metric: 'country',
    query: 'group_by=region&year=2019&measure=gdp_usd&per=adult_population',
    groupBy: ['region'],
    measures: { gdp_usd_sum: ['gdp_usd', 'sum'] },
    where: "state = ''",
    years: 'year = 2019',
    per: 'adult_population',
  },
  {
    name: 'compare, share and per at once',
    metric: 'ggr',
    query: 'group_by=region,channel,year&fx=USD&period=2022-01-01:2024-12-31&compare=previous_year&share=channel&per=adult_population',
    groupBy: ['region', 'channel', 'year'],
    measures: { ggr_sum: ['ggr', 'sum'] },
    where: USD,
    years: 'year BETWEEN 2022 AND 2024',
    compare: true,
    share: 'channel',
    per: 'adult_population',
  },
];

/** The case's answer, walked, beside DuckDB's: every group, every key, 1e-12 relative. */
async function compareCase(service: TestService, connection: DuckDBConnection, releaseDir: string, c: DerivedCase): Promise<any[]> {
  const pages = await walkPages(service, `/v1/aggregate?metric=${c.metric}&${c.query}`, 1000);
  const served = pages.flatMap((p) => p.data);
  const want = await expectedGroups(connection, releaseDir, c);
  assert.ok(served.length > 0, `${c.name}: some groups`);
  assert.is(served.length, want.size, `${c.name}: groups`);
  const keys = pages[0].meta.measures;
  for (const row of served) {
    const key = groupKey(row.dimensions, c.groupBy);
    const expected = want.get(key);
    assert.ok(expected, `${c.name}: group ${key} is DuckDB's`);
    assert.equal(Object.keys(row.values), [...keys, 'rows'], `${c.name}: keys in order`);
    assert.equal(Object.keys(row.values).sort(), Object.keys(expected!).sort(), `${c.name}: DuckDB has the same keys`);
    for (const [name, value] of Object.entries(row.values)) {
      assert.ok(close(value as number | null, expected![name]!), `${c.name}: ${key} ${name} = ${value}, DuckDB ${expected![name]}`);
    }
  }
  return served;
}

let service: TestService;
const values = suite('derived: values on the generated release');
values.before(async () => {
  service = await startTestService();
});
values.after(() => service.stop());

values('every case equals DuckDB over the Parquet files: windows, joins, DECIMAL sums, 1e-12 relative', async () => {
  await duckdb(async (connection) => {
    const dir = path.join(service.dataDir, FIXTURE_RELEASE);
    for (const c of CASES) {
      const served = await compareCase(service, connection, dir, c);
      // Each case shows what it is about: a derived value that is there.
      const derived = Object.keys(served[0].values).filter((k) => /_(prev|change|pct_change|share|per_\w+)$/.test(k));
      assert.ok(derived.length > 0 && served.some((row) => derived.every((k) => row.values[k] !== null)), `${c.name}: derived values`);
    }
  });
});

values('a change is the double nearest the true difference of the two true sums, bit for bit', async () => {
  const rows = (await walkPages(service, '/v1/aggregate?metric=ggr&group_by=region,year&fx=EUR&compare=previous_year', 1000)).flatMap(
    (p) => p.data,
  );
  await duckdb(async (connection) => {
    const file = quoteLiteral(path.join(service.dataDir, FIXTURE_RELEASE, 'ggr.parquet'));
    const lists = (
      await connection.runAndReadAll(
        `SELECT region, year::INTEGER, list(ggr) FROM read_parquet(${file}) WHERE fx = 'EUR' AND state = '' GROUP BY ALL`,
      )
    ).getRowsJS();
    const values = new Map(lists.map(([region, year, list]) => [`${region}|${year}`, list as number[]]));
    let checked = 0;
    for (const row of rows) {
      const prior = values.get(`${row.dimensions.region}|${row.dimensions.year - 1}`);
      if (!prior) continue;
      const mine = values.get(`${row.dimensions.region}|${row.dimensions.year}`)!;
      assert.is(
        row.values.ggr_sum_change,
        writtenSum([...mine, ...prior.map((x) => -x)]),
        `${row.dimensions.region} ${row.dimensions.year}`,
      );
      checked++;
    }
    assert.ok(checked > 50);
  });
});

values('shares of one dimension add up to 1 for each value of the others', async () => {
  const rows = (await service.get('/v1/aggregate?metric=ggr&group_by=region,channel&fx=USD&year=2024&share=channel')).json.data;
  const byRegion = new Map<string, number>();
  for (const row of rows) byRegion.set(row.dimensions.region, (byRegion.get(row.dimensions.region) ?? 0) + row.values.ggr_sum_share);
  for (const [region, total] of byRegion) assert.ok(Math.abs(total - 1) < 1e-12, `${region}: ${total}`);
});

values('the previous year is read even where year and period filter it out, and found by year, not position', async () => {
  const filtered = (await service.get('/v1/aggregate?metric=ggr&group_by=region,year&fx=USD&year=2024&compare=previous_year')).json.data;
  const whole = (await walkPages(service, '/v1/aggregate?metric=ggr&group_by=region,year&fx=USD', 1000)).flatMap((p) => p.data);
  assert.ok(filtered.length > 0);
  for (const row of filtered) {
    assert.is(row.dimensions.year, 2024);
    const prior = whole.find((g) => g.dimensions.region === row.dimensions.region && g.dimensions.year === 2023);
    assert.is(row.values.ggr_sum_prev, prior?.values.ggr_sum ?? null, row.dimensions.region);
  }
  // The first year of the data has no predecessor: all three are null.
  const first = (await service.get('/v1/aggregate?metric=ggr&group_by=year&fx=USD&year=2000&compare=previous_year')).json.data[0];
  assert.equal([first.values.ggr_sum_prev, first.values.ggr_sum_change, first.values.ggr_sum_pct_change], [null, null, null]);
});

values('the answer: meta lists every key in output order and echoes what was applied', async () => {
  const res = await service.get(
    '/v1/aggregate?metric=ggr&group_by=region,channel,year&fx=USD&year=2024&measure=ggr:sum&measure=ggr:avg&compare=previous_year&share=channel&per=adult_population&having=ggr_sum.gt.1e6&having=ggr_sum_share.gte.0&limit=2',
  );
  assert.is(res.status, 200, res.text);
  const { meta } = res.json;
  assert.equal(meta.measures, [
    'ggr_sum',
    'ggr_sum_prev',
    'ggr_sum_change',
    'ggr_sum_pct_change',
    'ggr_sum_share',
    'ggr_sum_per_adult_population',
    'ggr_avg',
    'ggr_avg_prev',
    'ggr_avg_change',
    'ggr_avg_pct_change',
  ]);
  assert.is(meta.compare, 'previous_year');
  assert.is(meta.share, 'channel');
  assert.equal(meta.per, { metric: 'adult_population', dataset: 'country', keys: ['country', 'state', 'year'] });
  assert.equal(meta.having, ['ggr_sum.gt.1e6', 'ggr_sum_share.gte.0']);
  assert.equal(meta.unmatched, { count: 0, keys: [] });
  for (const row of res.json.data) assert.equal(Object.keys(row.values), [...meta.measures, 'rows']);
  const plain = (await service.get('/v1/aggregate?metric=ggr&group_by=region&fx=USD')).json.meta;
  for (const absent of ['compare', 'share', 'per', 'having', 'unmatched']) assert.not.ok(absent in plain, absent);
});

values('having filters groups before order and limit: a stable top 10 among the groups above a bound', async () => {
  const base = '/v1/aggregate?metric=ggr&group_by=country&fx=USD&year=2024';
  const all = (await walkPages(service, `${base}&order=-ggr_sum`, 1000)).flatMap((p) => p.data);
  const bound = all[12].values.ggr_sum;
  const top = (await service.get(`${base}&having=ggr_sum.gt.${bound}&order=-ggr_sum&limit=10`)).json.data;
  assert.equal(top, all.filter((g) => g.values.ggr_sum > bound).slice(0, 10));
  const ops: Record<string, (x: number) => boolean> = {
    eq: (x) => x === bound,
    neq: (x) => x !== bound,
    gt: (x) => x > bound,
    gte: (x) => x >= bound,
    lt: (x) => x < bound,
    lte: (x) => x <= bound,
  };
  for (const [op, keep] of Object.entries(ops)) {
    const kept = (await walkPages(service, `${base}&having=ggr_sum.${op}.${bound}&order=-ggr_sum`, 1000)).flatMap((p) => p.data);
    assert.equal(
      kept,
      all.filter((g) => keep(g.values.ggr_sum)),
      op,
    );
  }
  // Every condition must hold; rows is a key too.
  const both = (await walkPages(service, `${base}&having=ggr_sum.lt.${bound}&having=rows.gte.2`, 1000)).flatMap((p) => p.data);
  assert.ok(both.length > 0);
  assert.ok(both.every((g) => g.values.ggr_sum < bound && g.values.rows >= 2));
});

values('a null never passes having, and nulls sort last either way', async () => {
  const base = '/v1/aggregate?metric=ggr&group_by=region,year&fx=USD&period=1999-01-01:2001-12-31&compare=previous_year';
  const rows = (await walkPages(service, base, 1000)).flatMap((p) => p.data);
  const nulls = rows.filter((g) => g.values.ggr_sum_pct_change === null);
  assert.ok(nulls.length > 0 && nulls.length < rows.length, 'the first year has no predecessor');
  for (const op of ['neq', 'gt', 'lt', 'gte', 'lte']) {
    const kept = (await walkPages(service, `${base}&having=ggr_sum_pct_change.${op}.0`, 1000)).flatMap((p) => p.data);
    assert.ok(
      kept.every((g) => g.values.ggr_sum_pct_change !== null),
      op,
    );
  }
  for (const order of ['ggr_sum_pct_change', '-ggr_sum_pct_change']) {
    const sorted = (await walkPages(service, `${base}&order=${order}`, 1000))
      .flatMap((p) => p.data)
      .map((g) => g.values.ggr_sum_pct_change);
    const firstNull = sorted.indexOf(null);
    assert.ok(firstNull > 0 && sorted.slice(firstNull).every((x) => x === null), order);
    const known = sorted.slice(0, firstNull) as number[];
    assert.equal(
      known,
      [...known].sort((a, b) => (order.startsWith('-') ? b - a : a - b)),
      order,
    );
  }
});

values('paging with limit=7 walks to the groups limit=1000 gives, with having', async () => {
  const query =
    '/v1/aggregate?metric=ggr&group_by=country,channel,year&fx=USD&period=2018-01-01:2024-12-31&compare=previous_year&share=channel&having=ggr_sum.gt.1e5&having=ggr_sum_pct_change.gt.-0.5&order=-ggr_sum_share';
  const small = (await walkPages(service, query, 7)).flatMap((p) => p.data);
  const whole = (await walkPages(service, query, 1000)).flatMap((p) => p.data);
  assert.ok(small.length > 3 * 7, `${small.length} groups span pages`);
  assert.equal(small, whole);
  assert.ok(whole.every((g) => g.values.ggr_sum > 1e5 && g.values.ggr_sum_pct_change > -0.5));
});

values('a cursor and a cached answer belong to one derived request', async () => {
  const base = 'metric=ggr&group_by=region,year&fx=USD&compare=previous_year&share=all&per=adult_population&having=ggr_sum.gt.0';
  const first = await service.get(`/v1/aggregate?${base}&limit=3`);
  const cursor = encodeURIComponent(first.json.pagination.cursor);
  const others = [
    base.replace('&compare=previous_year', ''),
    base.replace('share=all', 'share=region'),
    base.replace('&per=adult_population', '&per=gdp_usd'),
    base.replace('having=ggr_sum.gt.0', 'having=ggr_sum.gt.1'),
    `${base}&having=rows.gt.0`,
    base.replace('&having=ggr_sum.gt.0', ''),
  ];
  for (const other of others) {
    const res = await service.get(`/v1/aggregate?${other}&limit=3&cursor=${cursor}`);
    assert.is(res.status, 400, other);
    assert.equal(res.json, { error: 'Invalid pagination cursor' }, other);
    // Asked afresh, each is its own answer, not another's cached one.
    const fresh = await service.get(`/v1/aggregate?${other}&limit=3`);
    assert.is(fresh.status, 200, other);
    assert.not.equal(fresh.text, first.text, other);
  }
  assert.is(
    (await service.get(`/v1/aggregate?${base.split('&').reverse().join('&')}&limit=3&cursor=${cursor}`)).status,
    200,
    'any parameter order',
  );
});

values('rollup: compare and per on subtotal rows, each from its own sums', async () => {
  // Year first: the year subtotals have a previous year of their own; the grand total has none.
  const query = 'metric=ggr&group_by=year,region,channel&fx=USD&period=2022-01-01:2024-12-31&compare=previous_year&per=adult_population';
  const rolled = (await walkPages(service, `/v1/aggregate?${query}&rollup=true`, 1000)).flatMap((p) => p.data);
  const levels: Array<[string[], (g: any) => boolean]> = [
    [['year', 'region', 'channel'], (g) => g.dimensions.channel !== null],
    [['year', 'region'], (g) => g.dimensions.region !== null && g.dimensions.channel === null],
    [['year'], (g) => g.dimensions.year !== null && g.dimensions.region === null],
  ];
  for (const [groupBy, isLevel] of levels) {
    const plain = (await walkPages(service, `/v1/aggregate?${query.replace('year,region,channel', groupBy.join(','))}`, 1000)).flatMap(
      (p) => p.data,
    );
    const level = rolled.filter(isLevel);
    assert.is(level.length, plain.length, groupBy.join(','));
    for (const row of plain) {
      const match = level.find((g) => groupBy.every((d) => g.dimensions[d] === row.dimensions[d]));
      assert.equal(match?.values, row.values, `${groupBy.join(',')}: ${JSON.stringify(row.dimensions)}`);
    }
  }
  const total = rolled.at(-1);
  assert.equal(total.dimensions, { year: null, region: null, channel: null });
  assert.equal([total.values.ggr_sum_prev, total.values.ggr_sum_change, total.values.ggr_sum_pct_change], [null, null, null]);
  const world = (await service.get('/v1/aggregate?metric=ggr&fx=USD&period=2022-01-01:2024-12-31&per=adult_population')).json.data[0];
  assert.equal(
    [total.values.ggr_sum, total.values.ggr_sum_per_adult_population],
    [world.values.ggr_sum, world.values.ggr_sum_per_adult_population],
  );
});

values('CSV reads back in DuckDB and Arrow in apache-arrow: the same columns in the same order as JSON', async () => {
  const query =
    '/v1/aggregate?metric=ggr&group_by=region,channel,year&fx=USD&period=2000-01-01:2001-12-31&compare=previous_year&share=channel&per=gdp_usd&measure=ggr:sum&measure=ggr:max';
  const json = (await walkPages(service, query, 1000)).flatMap((p) => p.data);
  const meta = (await service.get(query)).json.meta;
  const columns = ['region', 'channel', 'year', ...meta.measures, 'rows'];
  const csv = await service.get(query, { headers: { accept: 'text/csv' } });
  assert.is(csv.status, 200);
  assert.is(csv.text.split('\r\n')[0], columns.join(','));
  const dir = await tempDir('dqs-derived-csv-');
  const file = path.join(dir, 'a.csv');
  await fs.writeFile(file, csv.text);
  try {
    await duckdb(async (connection) => {
      const read = (
        await connection.runAndReadAll(`SELECT * FROM read_csv(${quoteLiteral(file)}, header = true, all_varchar = true)`)
      ).getRowObjectsJS();
      assert.is(read.length, json.length);
      read.forEach((row: any, i: number) => {
        const want = { ...json[i].dimensions, ...json[i].values };
        for (const column of columns) {
          const got = column === 'region' || column === 'channel' || row[column] === null ? row[column] : Number(row[column]);
          assert.is(got, want[column], `${i} ${column}`);
        }
      });
    });
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
  const res = await fetch(`${service.url}${query}`, {
    headers: { 'x-api-key': service.key, accept: 'application/vnd.apache.arrow.stream' },
  });
  const table = tableFromIPC(new Uint8Array(await res.arrayBuffer()));
  assert.equal(
    table.schema.fields.map((f) => `${f.name}:${f.type}`),
    ['region:Utf8', 'channel:Utf8', 'year:Int32', ...meta.measures.map((k: string) => `${k}:Float64`), 'rows:Int32'],
  );
  assert.equal(
    table.toArray().map((r) => r.toJSON()),
    json.map((r: any) => ({ ...r.dimensions, ...r.values })),
  );
  assert.ok(
    json.some((r: any) => r.values.ggr_sum_prev === null),
    'nulls travel as nulls',
  );
});

values("guards: each refusal is a 400 in the spec's shape that names the fix", async () => {
  const refused: Array<[string, string]> = [
    [
      'group_by=region&fx=USD&compare=previous_year',
      'Cannot compare with the previous year without year in group_by: add year to group_by',
    ],
    ['group_by=region&fx=USD&share=channel', 'Invalid share "channel": use all, or a group_by dimension (region)'],
    ['fx=USD&share=galaxy', 'Invalid share "galaxy": use all, or a group_by dimension: add one to group_by'],
    [
      'group_by=region&fx=USD&share=all&rollup=true',
      "Cannot combine share with rollup=true (a subtotal is not a share of its own groups' total): leave out rollup or share",
    ],
    [
      'group_by=region&fx=USD&having=ggr_sum.gt.0&rollup=true',
      'Cannot combine having with rollup=true (hiding groups would leave subtotals of groups not shown): leave out rollup or having',
    ],
    [
      'group_by=region&fx=USD&measure=ggr:avg&share=all',
      'Cannot take a share of ggr:avg: share applies to sums; measure ggr:sum or leave share out',
    ],
    [
      'group_by=region&fx=USD&measure=ggr:max&measure=ggr:min&per=adult_population',
      'Cannot take a ratio of ggr:max: per applies to sums; measure ggr:sum or leave per out',
    ],
    [
      'group_by=region&fx=EUR&per=gdp_usd',
      'Cannot divide ggr per gdp_usd, which is in USD, unless ggr is in USD too: filter fx to USD (fx=USD)',
    ],
    [
      'group_by=region,fx&per=gdp_usd',
      'Cannot divide ggr per gdp_usd, which is in USD, unless ggr is in USD too: filter fx to USD (fx=USD)',
    ],
    ['group_by=region&fx=USD&per=turnover&metric=turnover', 'Cannot divide turnover per turnover: use per=adult_population or per=gdp_usd'],
    ['group_by=region&fx=USD&having=revenue.gt.1', 'Invalid having "revenue.gt.1": the key must be one of ggr_sum, rows'],
    [
      'group_by=region&fx=USD&share=all&having=ggr_sum_prev.gt.1',
      'Invalid having "ggr_sum_prev.gt.1": the key must be one of ggr_sum, ggr_sum_share, rows',
    ],
    [
      'group_by=region&fx=USD&share=all&order=-growth',
      'Invalid order "-growth": use one of region, ggr_sum, ggr_sum_share, rows, with a leading - for descending',
    ],
  ];
  for (const [query, error] of refused) {
    const metric = query.includes('metric=') ? '' : 'metric=ggr&';
    const res = await service.get(`/v1/aggregate?${metric}${query}`);
    assert.is(res.status, 400, query);
    assert.equal(res.json, { error }, query);
  }
  const other: Array<[string, string]> = [
    [
      'metric=country&group_by=region&measure=adult_population&per=gdp_usd',
      'Cannot divide adult_population per gdp_usd: adult_population is in people, not USD; measure a metric in USD',
    ],
    ['metric=fx&group_by=region&per=adult_population', 'Cannot divide fx per adult_population: no denominator divides fx'],
  ];
  for (const [query, error] of other) assert.equal((await service.get(`/v1/aggregate?${query}`)).json, { error }, query);
  const fields: Array<[string, string, string]> = [
    ['group_by=year&fx=USD&compare=next_year', 'compare', 'Expected previous_year'],
    ['group_by=year&fx=USD&compare=previous_year&compare=previous_year', 'compare', 'Expected a single value, received several'],
    ['group_by=year&fx=USD&per=adults', 'per', 'Expected one of adult_population, gdp_usd, turnover'],
    ['group_by=year&fx=USD&share=', 'share', 'Expected all or a group_by dimension'],
    [
      'group_by=year&fx=USD&having=ggr_sum.big.1',
      'having',
      'Expected <key>.<op>.<number> with op one of eq, neq, gt, gte, lt, lte, e.g. ggr_sum.gt.1e9',
    ],
    [
      'group_by=year&fx=USD&having=ggr_sum.gt.many',
      'having',
      'Expected <key>.<op>.<number> with op one of eq, neq, gt, gte, lt, lte, e.g. ggr_sum.gt.1e9',
    ],
    ['group_by=year&fx=USD&having=ggr_sum.gt.1e999', 'having', 'Expected a number within the range of a double'],
  ];
  for (const [query, field, message] of fields) {
    const res = await service.get(`/v1/aggregate?metric=ggr&${query}`);
    assert.is(res.status, 400, query);
    assert.is(res.json.error, 'Invalid query parameters');
    assert.equal(res.json.details.fieldErrors[field], [message], query);
  }
});

values('each sum gets its share and ratio; other measures stay as they are', async () => {
  const res = await service.get('/v1/aggregate?metric=country&group_by=region&year=2020&share=all');
  assert.is(res.status, 200);
  assert.equal(res.json.meta.measures, [
    'gdp_usd_sum',
    'gdp_usd_sum_share',
    'adult_population_sum',
    'adult_population_sum_share',
    'inflation_avg',
  ]);
  assert.equal(
    res.json.meta.omitted.map((o: any) => o.measure),
    ['gdp_local_currency:sum'],
  );
  // gdp_usd divides sums in USD only: people per dollar is not asked for.
  const gdp = await service.get('/v1/aggregate?metric=country&group_by=region&year=2020&per=gdp_usd');
  assert.equal(gdp.json.meta.measures, ['gdp_usd_sum', 'gdp_usd_sum_per_gdp_usd', 'adult_population_sum', 'inflation_avg']);
  const mixed = await service.get('/v1/aggregate?metric=ggr&group_by=region&fx=USD&measure=ggr:sum&measure=ggr:avg&share=all&per=turnover');
  assert.equal(mixed.json.meta.measures, ['ggr_sum', 'ggr_sum_share', 'ggr_sum_per_turnover', 'ggr_avg']);
  // compare applies to every function: an average is compared as an average.
  const avg = await service.get('/v1/aggregate?metric=country&group_by=year&year=2020&compare=previous_year');
  assert.ok(avg.json.meta.measures.includes('inflation_avg_pct_change'));
  // Rates alone have no sum to share.
  assert.equal((await service.get('/v1/aggregate?metric=fx&group_by=year&share=all')).json, {
    error: 'Cannot take a share of fx_constant_usd:avg: share applies to sums; measure fx_constant_usd:sum or leave share out',
  });
});

values("the catalog lists each dataset's denominators from the registry", async () => {
  const { datasets } = (await service.get('/v1/catalog')).json;
  const ggr = datasets.find((d: any) => d.name === 'ggr');
  assert.equal(
    ggr.per.map((p: any) => [p.metric, p.dataset, p.keys, p.numerator_unit ?? null]),
    [
      ['adult_population', 'country', ['country', 'state', 'year'], null],
      ['gdp_usd', 'country', ['country', 'state', 'year'], 'USD'],
      ['turnover', 'turnover', ggr.dimensions, null],
    ],
  );
  assert.equal(
    datasets.find((d: any) => d.name === 'turnover').per.map((p: any) => p.metric),
    ['adult_population', 'gdp_usd'],
  );
  assert.not.ok('per' in datasets.find((d: any) => d.name === 'fx'));
});

const QUERIES = [
  'metric=ggr&group_by=region,year&fx=USD&compare=previous_year&rollup=true',
  'metric=ggr&group_by=country,channel&fx=USD&year=2024&channel=Online&share=channel&order=-ggr_sum_share',
  'metric=ggr&group_by=region,channel&fx=USD&period=2020-01-01:2024-12-31&per=adult_population&rollup=true',
  'metric=ggr&group_by=product,year&fx=EUR&per=turnover&compare=previous_year&having=ggr_sum_per_turnover.gt.0.1',
  'metric=turnover&group_by=region,state&fx=USD&share=all&per=gdp_usd',
];

values('the same bodies in JSON, CSV and Arrow across runs', async () => {
  for (const accept of ['application/json', 'text/csv', 'application/vnd.apache.arrow.stream']) {
    const first = await Promise.all(QUERIES.map((q) => service.get(`/v1/aggregate?${q}`, { headers: { accept } })));
    for (const res of first) assert.is(res.status, 200, res.text);
    const again = await Promise.all(QUERIES.map((q) => service.get(`/v1/aggregate?${q}`, { headers: { accept } })));
    assert.equal(
      again.map((r) => r.text),
      first.map((r) => r.text),
      accept,
    );
  }
});

const restarts = suite('derived: bodies across restarts and DUCKDB_THREADS');
restarts('byte-identical', async () => {
  const bodies = await bodiesPerThreads(QUERIES.map((q) => `/v1/aggregate?${q}`));
  assert.equal(bodies[0], bodies[1]);
});

// A drop as another tool writes it, with the gaps derived measures must meet: a
// country without adults for some years, a group without a prior year, a prior value
// of 0, and turnover missing some of ggr's rows (so hold matches key by key).
const drop = suite('derived: a drop written by plain DuckDB');
let dropService: TestService;
let dropDir: string;
const DROP_RELEASE = '2026-03';
drop.before(async () => {
  const geo = `(VALUES ('Europe', 'Atlantis', ''), ('Europe', 'Borduria', ''), ('Asia - ME', 'Carpania', ''),
    ('North America', 'Dakota', ''), ('North America', 'Dakota', 'North'), ('North America', 'Dakota', 'South')) AS g(region, country, state)`;
  const grid = `FROM ${geo}, range(2018, 2023) AS y(year), (VALUES ('Online'), ('Land')) AS c(channel), (VALUES ('USD'), ('EUR')) AS f(fx), (VALUES ('Poker'), ('Slots')) AS p(product)`;
  // Borduria has no rows in 2020; Carpania's online GGR is 0 in 2019.
  const market = `SELECT year::INTEGER AS year, region, country, state, 'Gaming' AS category, product, channel, 'Onshore' AS sub_channel, fx, 'Current' AS temporal, 'Reported' AS calculation,
    CASE WHEN country = 'Carpania' AND channel = 'Online' AND year = 2019 THEN 0 ELSE (year - 2000) * 10.3 + length(country) * 1.7 + length(state) / 3 + (channel = 'Online')::INT * 5.5 + (product = 'Slots')::INT / 7 + (fx = 'EUR')::INT * 0.9 END::DOUBLE AS ggr
    ${grid} WHERE NOT (country = 'Borduria' AND year = 2020)`;
  const sql: Record<string, string> = {
    ggr: market,
    // Atlantis's land turnover of 2022 is missing.
    turnover: `SELECT * EXCLUDE (ggr), ggr * 9.25 + 1 / 3 AS turnover FROM (${market}) WHERE NOT (country = 'Atlantis' AND channel = 'Land' AND year = 2022)`,
    fx: `SELECT DISTINCT year::INTEGER AS year, region, country, state, 'XOF' AS fx_local_currency, 'Current' AS temporal, 'Reported' AS calculation, 0.5 AS fx_constant_usd, 0.6 AS fx_current_eur, 0.7 AS fx_constant_eur, 0.8 AS fx_current_usd ${grid}`,
    // Atlantis has no population rows for 2021 and 2022.
    country: `SELECT DISTINCT year::INTEGER AS year, region, country, state, 'Current' AS temporal, 'Reported' AS calculation, 1e6 * year AS gdp_local_currency,
      (1e9 + length(country || state) * 1e7 + year * 1e5 / 3)::DOUBLE AS gdp_usd, CASE WHEN country = 'Atlantis' AND year >= 2021 THEN NULL ELSE (1e5 + length(country || state) * 1e3 + year)::BIGINT END AS adult_population, 2.5 AS inflation ${grid}`,
    country_reference: `SELECT DISTINCT region, country, 'Tracked' AS country_type FROM ${geo}`,
  };
  sql.country = `SELECT * EXCLUDE (adult_population), adult_population FROM (${sql.country}) WHERE adult_population IS NOT NULL`;
  dropDir = await publishDrop(sql, DROP_RELEASE);
  dropService = await startTestService({ dataDir: dropDir });
});
drop.after(async () => {
  await dropService.stop();
  await fs.rm(dropDir, { recursive: true, force: true });
});

const DROP_CASES: DerivedCase[] = [
  {
    name: 'YoY by region and channel: a missing prior year, a prior of 0',
    metric: 'ggr',
    query: 'group_by=region,channel,year&fx=USD&period=2019-01-01:2022-12-31&compare=previous_year',
    groupBy: ['region', 'channel', 'year'],
    measures: { ggr_sum: ['ggr', 'sum'] },
    where: USD,
    years: 'year BETWEEN 2019 AND 2022',
    compare: true,
  },
  {
    name: 'YoY by country, averages too',
    metric: 'ggr',
    query: 'group_by=country,year&fx=EUR&compare=previous_year&measure=ggr:sum&measure=ggr:avg',
    groupBy: ['country', 'year'],
    measures: { ggr_sum: ['ggr', 'sum'], ggr_avg: ['ggr', 'avg'] },
    where: "fx = 'EUR' AND state = ''",
    compare: true,
  },
  {
    name: "GGR per adult by region and year: Europe without Atlantis's adults is null",
    metric: 'ggr',
    query: 'group_by=region,year&fx=USD&per=adult_population',
    groupBy: ['region', 'year'],
    measures: { ggr_sum: ['ggr', 'sum'] },
    where: USD,
    per: 'adult_population',
  },
  {
    name: 'GGR per adult by state and channel',
    metric: 'ggr',
    query: 'group_by=state,channel&fx=USD&country=Dakota&year=2021&per=adult_population',
    groupBy: ['state', 'channel'],
    measures: { ggr_sum: ['ggr', 'sum'] },
    where: "fx = 'USD' AND country = 'Dakota'",
    years: 'year = 2021',
    per: 'adult_population',
  },
  {
    name: 'hold by country and year, turnover matched key by key',
    metric: 'ggr',
    query: 'group_by=country,year&fx=USD&per=turnover',
    groupBy: ['country', 'year'],
    measures: { ggr_sum: ['ggr', 'sum'] },
    where: USD,
    per: 'turnover',
  },
  {
    name: 'GGR as a fraction of GDP, online share of each country',
    metric: 'ggr',
    query: 'group_by=country,channel&fx=USD&year=2022&channel=Online&share=channel&per=gdp_usd',
    groupBy: ['country', 'channel'],
    measures: { ggr_sum: ['ggr', 'sum'] },
    where: USD,
    years: 'year = 2022',
    shareWhere: "channel = 'Online'",
    share: 'channel',
    per: 'gdp_usd',
  },
];

drop('every case equals DuckDB over the published files', async () => {
  await duckdb(async (connection) => {
    for (const c of DROP_CASES) await compareCase(dropService, connection, path.join(dropDir, DROP_RELEASE), c);
  });
});

drop('the gaps show as nulls: no predecessor, a predecessor of 0, a key without adults', async () => {
  const yoy = (await dropService.get('/v1/aggregate?metric=ggr&group_by=country,channel,year&fx=USD&compare=previous_year')).json.data;
  const at = (country: string, channel: string, year: number) =>
    yoy.find((g: any) => g.dimensions.country === country && g.dimensions.channel === channel && g.dimensions.year === year).values;
  const borduria = at('Borduria', 'Online', 2021);
  assert.equal(
    [borduria.ggr_sum_prev, borduria.ggr_sum_change, borduria.ggr_sum_pct_change],
    [null, null, null],
    'no 2020 rows: no predecessor',
  );
  const carpania = at('Carpania', 'Online', 2020);
  assert.is(carpania.ggr_sum_prev, 0);
  assert.is(carpania.ggr_sum_change, carpania.ggr_sum);
  assert.is(carpania.ggr_sum_pct_change, null, 'a predecessor of 0 has no percent change');
  const perAdult = (await dropService.get('/v1/aggregate?metric=ggr&group_by=region,year&fx=USD&per=adult_population&region=Europe')).json;
  const europe = (year: number) => perAdult.data.find((g: any) => g.dimensions.year === year).values.ggr_sum_per_adult_population;
  assert.ok(europe(2020) > 0);
  assert.is(europe(2021), null, 'Atlantis has no adults in 2021: never a ratio of partial sums');
  assert.equal(perAdult.meta.unmatched, {
    count: 2,
    keys: [
      { country: 'Atlantis', state: '', year: 2021 },
      { country: 'Atlantis', state: '', year: 2022 },
    ],
  });
});

drop('meta.unmatched counts the keys without a denominator row, and lists the first ten as DuckDB finds them', async () => {
  await duckdb(async (connection) => {
    for (const c of DROP_CASES.filter((x) => x.per)) {
      const meta = (await dropService.get(`/v1/aggregate?metric=${c.metric}&${c.query}`)).json.meta;
      const want = await expectedUnmatched(connection, path.join(dropDir, DROP_RELEASE), c);
      assert.is(meta.unmatched.count, want.length, c.name);
      assert.equal(meta.unmatched.keys, want.slice(0, 10), c.name);
    }
  });
  const hold = (await dropService.get('/v1/aggregate?metric=ggr&group_by=country&fx=USD&per=turnover')).json.meta.unmatched;
  assert.is(hold.count, 2, 'Atlantis land, 2022: two products');
});

// README's derived examples run, as a reader copies them, and show what they say.
values('README: the five derived examples of README.md and its CLI line answer with their derived values', async () => {
  const text = await fs.readFile(path.resolve(import.meta.dirname, '../README.md'), 'utf8');
  const section = text.slice(text.indexOf('#### Derived measures'), text.indexOf('#### Time series'));
  const lines = [...section.matchAll(/^curl -s "\$BASE(\/v1\/aggregate\?[^"]+)"/gm)].map((m) => m[1]!);
  assert.is(lines.length, 5, 'YoY growth, online share, GGR per adult, % of GDP, hold');
  for (const [pathAndQuery, derived] of lines.map(
    (line, i) => [line, ['_pct_change', '_share', '_per_adult_population', '_per_gdp_usd', '_per_turnover'][i]!] as const,
  )) {
    const res = await service.get(pathAndQuery);
    assert.is(res.status, 200, `${pathAndQuery}: ${res.text}`);
    const key = res.json.meta.measures.find((k: string) => k.endsWith(derived));
    assert.ok(key, `${pathAndQuery} has a ${derived} key`);
    assert.ok(res.json.data.length > 0 && res.json.data.some((g: any) => g.values[key] !== null), pathAndQuery);
  }
  const cli = /^DQS_API_KEY=\$KEY npm run --silent query -- (aggregate .+)$/m.exec(section)?.[1];
  assert.ok(cli, 'README shows the CLI line');
  const args = cli!.split(' ');
  const res = await runQueryCli([...args, '--all'], { DQS_API_KEY: service.key, DQS_URL: service.url });
  assert.is(res.code, 0, res.stderr);
  assert.ok(JSON.parse(res.stdout.toString()).length > 0);
});

values.run();
restarts.run();
drop.run();
