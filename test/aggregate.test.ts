import fs from 'node:fs/promises';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { quoteIdent, quoteLiteral } from '../src/duckdb/sql-text.ts';
import { DATASETS, metricDef } from '../src/registry.ts';
import { publishDrop } from './helpers/drop.ts';
import { columnSum, isDecimalColumn } from './helpers/exact-sum.ts';
import { bodiesPerThreads, FIXTURE_RELEASE, send, startTestService, type TestService, tempDir, walkPages } from './helpers/service.ts';

// /v1/aggregate against DuckDB grouping the release's own Parquet files, with each
// group's values added up exactly (as integers of 2^-1074) and rounded once: the
// double nearest the true sum, which is what every sum must be.

interface Case {
  readonly name: string;
  readonly metric: string;
  readonly query: string;
  readonly groupBy: readonly string[];
  /** measure key → [metric, fn] */
  readonly measures: Record<string, readonly [string, 'sum' | 'avg' | 'min' | 'max']>;
  /** The rows DuckDB groups, as SQL over the file's columns. */
  readonly where: string;
}

const CASES: Case[] = [
  {
    name: 'world ggr by region and year in USD',
    metric: 'ggr',
    query: 'group_by=region,year&fx=USD',
    groupBy: ['region', 'year'],
    measures: { ggr_sum: ['ggr', 'sum'] },
    where: "fx = 'USD' AND state = ''",
  },
  {
    name: 'online ggr by country in 2024, every function',
    metric: 'ggr',
    query: 'group_by=country&fx=USD&channel=Online&year=2024&measure=ggr:sum&measure=ggr:avg&measure=ggr:min&measure=ggr:max',
    groupBy: ['country'],
    measures: { ggr_sum: ['ggr', 'sum'], ggr_avg: ['ggr', 'avg'], ggr_min: ['ggr', 'min'], ggr_max: ['ggr', 'max'] },
    where: "fx = 'USD' AND channel = 'Online' AND year = 2024 AND state = ''",
  },
  {
    name: 'turnover by fx and state (both kinds of rows, grouped apart)',
    metric: 'turnover',
    query: 'group_by=fx,state&period=2010-01-01:2012-12-31',
    groupBy: ['fx', 'state'],
    measures: { turnover_sum: ['turnover', 'sum'] },
    where: 'year BETWEEN 2010 AND 2012',
  },
  {
    name: 'average fx rates by year',
    metric: 'fx',
    query: 'group_by=year',
    groupBy: ['year'],
    measures: {
      fx_constant_usd_avg: ['fx_constant_usd', 'avg'],
      fx_current_eur_avg: ['fx_current_eur', 'avg'],
      fx_constant_eur_avg: ['fx_constant_eur', 'avg'],
      fx_current_usd_avg: ['fx_current_usd', 'avg'],
    },
    where: "state = ''",
  },
  {
    name: 'country indicators by region and country, defaults',
    metric: 'country',
    query: 'group_by=region,country&temporal=Current',
    groupBy: ['region', 'country'],
    measures: {
      gdp_local_currency_sum: ['gdp_local_currency', 'sum'],
      gdp_usd_sum: ['gdp_usd', 'sum'],
      adult_population_sum: ['adult_population', 'sum'],
      inflation_avg: ['inflation', 'avg'],
    },
    where: "temporal = 'Current' AND state = ''",
  },
  // sub_channel is in no rollup: the served rows, of which a year filter reads one span (two years apart: from the first's to the last's).
  {
    name: 'ggr by sub_channel in two years apart, from the served rows',
    metric: 'ggr',
    query: 'group_by=year,sub_channel&fx=EUR&year=2011&year=2014',
    groupBy: ['year', 'sub_channel'],
    measures: { ggr_sum: ['ggr', 'sum'] },
    where: "fx = 'EUR' AND year IN (2011, 2014) AND state = ''",
  },
  {
    name: 'one total, no group_by',
    metric: 'ggr',
    query: 'fx=EUR&category=Gaming',
    groupBy: [],
    measures: { ggr_sum: ['ggr', 'sum'] },
    where: "fx = 'EUR' AND category = 'Gaming' AND state = ''",
  },
];

const groupKey = (dimensions: Record<string, unknown>, groupBy: readonly string[]) => JSON.stringify(groupBy.map((d) => dimensions[d]));

/** What each group's values must be, from DuckDB over the Parquet file and exact sums. */
async function expected(connection: DuckDBConnection, file: string, c: Case): Promise<Map<string, Record<string, number>>> {
  const metrics = [...new Set(Object.values(c.measures).map(([m]) => m))];
  const dims = c.groupBy.map((d) => (d === 'year' ? `${quoteIdent(d)}::INTEGER` : `${quoteIdent(d)}::VARCHAR`));
  const sql = `SELECT ${[...dims, ...metrics.map((m) => `list(${quoteIdent(m)}::DOUBLE)`), 'count(*)::INTEGER'].join(', ')}
    FROM read_parquet(${quoteLiteral(file)}) WHERE ${c.where} ${dims.length ? `GROUP BY ALL` : ''}`;
  const rows = (await connection.runAndReadAll(sql)).getRowsJS();
  const decimal: Record<string, boolean> = {};
  for (const m of metrics) {
    const all = (
      await connection.runAndReadAll(`SELECT list(${quoteIdent(m)}::DOUBLE) FROM read_parquet(${quoteLiteral(file)})`)
    ).getRowsJS();
    decimal[m] = isDecimalColumn(all[0]![0] as number[]);
  }
  const groups = new Map<string, Record<string, number>>();
  for (const row of rows) {
    const count = row.at(-1) as number;
    if (count === 0) continue;
    const lists = Object.fromEntries(metrics.map((m, i) => [m, row[c.groupBy.length + i] as number[]]));
    const values: Record<string, number> = { rows: count };
    for (const [key, [metric, fn]] of Object.entries(c.measures)) {
      const list = lists[metric]!;
      values[key] =
        fn === 'sum'
          ? columnSum(list, decimal[metric]!)
          : fn === 'avg'
            ? columnSum(list, decimal[metric]!) / count
            : fn === 'min'
              ? Math.min(...list)
              : Math.max(...list);
    }
    groups.set(JSON.stringify(row.slice(0, c.groupBy.length)), values);
  }
  return groups;
}

async function compareCases(service: TestService, dataDir: string, release: string, cases: readonly Case[]) {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    for (const c of cases) {
      const pages = await walkPages(service, `/v1/aggregate?metric=${c.metric}&${c.query}`, 1000);
      const served = pages.flatMap((p) => p.data);
      const want = await expected(connection, path.join(dataDir, release, `${c.metric}.parquet`), c);
      assert.is(served.length, want.size, `${c.name}: groups`);
      assert.ok(served.length > 0, `${c.name}: some groups`);
      for (const row of served) {
        const key = groupKey(row.dimensions, c.groupBy);
        assert.equal(row.values, want.get(key), `${c.name}: group ${key}`);
      }
      // Default order: the group_by values ascending.
      const keys = served.map((row) => c.groupBy.map((d) => row.dimensions[d]));
      const sorted = [...keys].sort((a, b) => {
        for (let i = 0; i < a.length; i++) {
          if (a[i] < b[i]) return -1;
          if (a[i] > b[i]) return 1;
        }
        return 0;
      });
      assert.equal(keys, sorted, `${c.name}: order`);
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

let service: TestService;
const metricsText = async () => (await send(`${service.adminUrl}/metrics`)).text;
const computations = async () => Number(/^dqs_aggregate_computations_total (\d+)/m.exec(await metricsText())?.[1]);

const values = suite('aggregate: values');
values.before(async () => {
  service = await startTestService();
});
values.after(() => service.stop());

values('every case equals DuckDB grouping the Parquet file with exact sums', async () => {
  await compareCases(service, service.dataDir, FIXTURE_RELEASE, CASES);
});

values('the answer: meta, measure keys, rows, and one request counted', async () => {
  const res = await service.get('/v1/aggregate?metric=ggr&group_by=region&group_by=year&fx=USD&limit=2');
  assert.is(res.status, 200);
  assert.equal(res.json.meta, {
    dataset: 'ggr',
    metric: 'ggr',
    group_by: ['region', 'year'],
    measures: ['ggr_sum'],
    filters_applied: { state: [''], fx: ['USD'] },
    row_count: 2,
    release: FIXTURE_RELEASE,
  });
  assert.equal(Object.keys(res.json.data[0].values), ['ggr_sum', 'rows']);
  assert.is(res.json.pagination.has_more, true);
  assert.match(String(res.headers.link), /^<\/v1\/aggregate\?.*cursor=.*>; rel="next"$/);
  const again = await service.get('/v1/aggregate?metric=ggr&group_by=region&group_by=year&fx=USD&limit=2');
  assert.is(Number(again.headers['x-ratelimit-remaining']), Number(res.headers['x-ratelimit-remaining']) - 1);
});

values('caching as elsewhere: ETag and 304, br, and the key check', async () => {
  const query = '/v1/aggregate?metric=ggr&group_by=channel&fx=GBP';
  const first = await service.get(query);
  assert.is(first.status, 200);
  assert.match(String(first.headers.etag), /^"[A-Za-z0-9_-]{22}"$/);
  assert.match(String(first.headers['cache-control']), /^private, max-age=\d+$/);
  const again = await service.get(query, { headers: { 'if-none-match': String(first.headers.etag) } });
  assert.is(again.status, 304);
  const br = await fetch(`${service.url}${query}`, { headers: { 'x-api-key': service.key, 'accept-encoding': 'br' } });
  assert.is(br.headers.get('content-encoding'), 'br');
  assert.equal(await br.json(), first.json);
  assert.is((await service.get(query, { key: null })).status, 401);
});

values('without measure: defaults, and those that cannot combine are named in meta.omitted', async () => {
  const res = await service.get('/v1/aggregate?metric=country&group_by=region');
  assert.is(res.status, 200);
  assert.equal(res.json.meta.measures, ['gdp_usd_sum', 'adult_population_sum', 'inflation_avg']);
  assert.equal(res.json.meta.omitted, [
    {
      measure: 'gdp_local_currency:sum',
      reason: 'Cannot combine gdp_local_currency values in different currencies: filter country to one country or add country to group_by',
    },
  ]);
});

values('paging: limit=7 walks to the groups limit=1000 gives, one computation for the whole walk', async () => {
  const query = '/v1/aggregate?metric=ggr&group_by=region,category,year&fx=USD&measure=ggr:max';
  const before = await computations();
  const queries = service.running.services.db.queriesRun;
  const small = (await walkPages(service, query, 7)).flatMap((p) => p.data);
  assert.is(await computations(), before + 1);
  assert.is(service.running.services.db.queriesRun, queries, 'no page of the walk ran a DuckDB query: they slice the kept result');
  const whole = (await walkPages(service, query, 1000)).flatMap((p) => p.data);
  assert.ok(small.length > 50);
  assert.equal(small, whole);
  assert.is(await computations(), before + 1, 'the limit=1000 walk sliced the kept result too');
});

values('identical requests at once compute once', async () => {
  const before = await computations();
  const query = '/v1/aggregate?metric=turnover&group_by=country,channel&fx=EUR&measure=turnover:min';
  const answers = await Promise.all(Array.from({ length: 8 }, () => service.get(query)));
  for (const res of answers) assert.is(res.status, 200);
  assert.ok(new Set(answers.map((r) => r.text)).size === 1);
  assert.is(await computations(), before + 1);
});

values('a cursor is bound to every other parameter', async () => {
  const first = await service.get('/v1/aggregate?metric=ggr&group_by=region,year&fx=USD&limit=3');
  const cursor = encodeURIComponent(first.json.pagination.cursor);
  for (const other of [
    'group_by=region,year&fx=EUR',
    'group_by=year,region&fx=USD',
    'group_by=region,year&fx=USD&order=-ggr_sum',
    'group_by=region,year&fx=USD&measure=ggr:avg',
    'group_by=region,year&fx=USD&rollup=true',
  ]) {
    const res = await service.get(`/v1/aggregate?metric=ggr&${other}&limit=3&cursor=${cursor}`);
    assert.is(res.status, 400, other);
    assert.equal(res.json, { error: 'Invalid pagination cursor' });
  }
  const next = await service.get(`/v1/aggregate?fx=USD&metric=ggr&group_by=region,year&limit=3&cursor=${cursor}`);
  assert.is(next.status, 200);
});

values('order by a measure: a stable top 10, ties broken by the group', async () => {
  const res = await service.get('/v1/aggregate?metric=ggr&group_by=country&fx=USD&year=2024&order=-ggr_sum&limit=10');
  const sums = res.json.data.map((row: any) => row.values.ggr_sum);
  assert.is(sums.length, 10);
  assert.equal(
    sums,
    [...sums].sort((a: number, b: number) => b - a),
  );
  const all = (await walkPages(service, '/v1/aggregate?metric=ggr&group_by=country&fx=USD&year=2024&order=-ggr_sum', 1000)).flatMap(
    (p) => p.data,
  );
  assert.equal(all.slice(0, 10), res.json.data);
  const byRows = (await service.get('/v1/aggregate?metric=ggr&group_by=country,channel&fx=USD&year=2024&order=rows')).json.data;
  for (let i = 1; i < byRows.length; i++) {
    const [a, b] = [byRows[i - 1], byRows[i]];
    assert.ok(
      a.values.rows < b.values.rows ||
        (a.values.rows === b.values.rows && [a.dimensions.country, a.dimensions.channel] <= [b.dimensions.country, b.dimensions.channel]),
    );
  }
});

values('rollup: subtotals and a grand total, each the exact sum of its groups', async () => {
  const res = await service.get('/v1/aggregate?metric=ggr&group_by=region,channel&fx=USD&year=2020&rollup=true');
  const rows = res.json.data;
  const detail = rows.filter((r: any) => r.dimensions.region !== null && r.dimensions.channel !== null);
  const subtotals = rows.filter((r: any) => r.dimensions.region !== null && r.dimensions.channel === null);
  const total = rows.filter((r: any) => r.dimensions.region === null);
  assert.is(subtotals.length, new Set(detail.map((r: any) => r.dimensions.region)).size);
  assert.is(total.length, 1);
  assert.equal(total[0].dimensions, { region: null, channel: null });
  assert.is(rows.at(-1), total[0], 'the grand total comes last');
  const plain = (await service.get('/v1/aggregate?metric=ggr&fx=USD&year=2020')).json.data[0];
  assert.equal(total[0].values, plain.values);
  // Each subtotal follows its region's groups.
  for (const sub of subtotals) {
    const at = rows.indexOf(sub);
    assert.is(rows[at - 1].dimensions.region, sub.dimensions.region);
    const mine = detail.filter((r: any) => r.dimensions.region === sub.dimensions.region);
    assert.is(
      sub.values.rows,
      mine.reduce((n: number, r: any) => n + r.values.rows, 0),
    );
  }
  // Rolling state up adds the national rows alone, as a request without state does.
  const byState = (await service.get('/v1/aggregate?metric=ggr&group_by=country,state&fx=USD&year=2020&region=North%20America&rollup=true'))
    .json.data;
  const countries = byState.filter((r: any) => r.dimensions.state === null && r.dimensions.country !== null);
  const national = (await service.get('/v1/aggregate?metric=ggr&group_by=country&fx=USD&year=2020&region=North%20America')).json.data;
  assert.equal(
    countries.map((r: any) => r.values),
    national.map((r: any) => r.values),
  );
  assert.ok(
    byState.some((r: any) => r.dimensions.state !== '' && r.dimensions.state !== null),
    'state rows are there to be left out',
  );
});

values('CSV reads back in DuckDB, Arrow in apache-arrow, both equal to JSON', async () => {
  const query =
    '/v1/aggregate?metric=ggr&group_by=country,state&fx=USD&year=2021&country=United%20States&country=Canada&rollup=true&measure=ggr:sum&measure=ggr:max';
  const json = (await service.get(query)).json.data;
  const csv = await service.get(query, { headers: { accept: 'text/csv' } });
  assert.is(csv.status, 200);
  assert.is(csv.text.split('\r\n')[0], 'country,state,ggr_sum,ggr_max,rows');
  const dir = await tempDir('dqs-agg-csv-');
  const file = path.join(dir, 'a.csv');
  await fs.writeFile(file, csv.text);
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const read = (
      await connection.runAndReadAll(
        `SELECT * FROM read_csv(${quoteLiteral(file)}, header = true, all_varchar = true, allow_quoted_nulls = false)`,
      )
    ).getRowObjectsJS();
    assert.is(read.length, json.length);
    read.forEach((row: any, i: number) => {
      const want = json[i];
      // A rolled-up dimension is an empty field (NULL); the empty state is "" (an empty string).
      assert.is(row.country, want.dimensions.country);
      assert.is(row.state, want.dimensions.state);
      assert.is(Number(row.ggr_sum), want.values.ggr_sum);
      assert.is(Number(row.ggr_max), want.values.ggr_max);
      assert.is(Number(row.rows), want.values.rows);
    });
  } finally {
    connection.closeSync();
    instance.closeSync();
    await fs.rm(dir, { recursive: true, force: true });
  }
  const arrow = await service.get(query, { headers: { accept: 'application/vnd.apache.arrow.stream' } });
  assert.is(arrow.status, 200);
  const res = await fetch(`${service.url}${query}`, {
    headers: { 'x-api-key': service.key, accept: 'application/vnd.apache.arrow.stream' },
  });
  const table = tableFromIPC(new Uint8Array(await res.arrayBuffer()));
  assert.equal(
    table.schema.fields.map((f) => `${f.name}:${f.type}`),
    ['country:Utf8', 'state:Utf8', 'ggr_sum:Float64', 'ggr_max:Float64', 'rows:Int32'],
  );
  assert.equal(
    table.toArray().map((r) => r.toJSON()),
    json.map((r: any) => ({ ...r.dimensions, ...r.values })),
  );
});

values("guards: each refusal names the fix, in the spec's error shape", async () => {
  const refused: Array<[string, string]> = [
    ['metric=ggr&group_by=region', 'Cannot combine ggr values in different currencies: filter fx to one currency or add fx to group_by'],
    [
      'metric=ggr&group_by=region&fx=USD&fx=EUR',
      'Cannot combine ggr values in different currencies: filter fx to one currency or add fx to group_by',
    ],
    [
      'metric=ggr&group_by=region&fx=USD&measure=turnover',
      'Invalid measure "turnover" for metric "ggr": use <metric>:<fn> or <metric> alone, with a metric of ggr and fn one of sum, avg, min, max',
    ],
    [
      'metric=ggr&group_by=region&fx=USD&measure=ggr:median',
      'Invalid measure "ggr:median" for metric "ggr": use <metric>:<fn> or <metric> alone, with a metric of ggr and fn one of sum, avg, min, max',
    ],
    ['metric=country&group_by=region&measure=inflation:sum', 'Cannot sum inflation, a rate: use avg, min or max'],
    [
      'metric=country&group_by=region&measure=gdp_local_currency:max',
      'Cannot combine gdp_local_currency values in different currencies: filter country to one country or add country to group_by',
    ],
    ['metric=fx&measure=fx_current_usd:sum', 'Cannot sum fx_current_usd, a rate: use avg, min or max'],
    [
      'metric=ggr&fx=USD&group_by=product&group_by=galaxy',
      `Invalid group_by dimension "galaxy" for metric "ggr". Valid dimensions: ${DATASETS.find((d) => d.name === 'ggr')!.dimensions.join(', ')}`,
    ],
    [
      'metric=ggr&fx=USD&group_by=region&order=-revenue',
      'Invalid order "-revenue": use one of region, ggr_sum, rows, with a leading - for descending',
    ],
    [
      'metric=ggr&fx=USD&state=&state=Nevada',
      'Cannot add national totals (state "") to the rows they total: filter state to "" alone or leave "" out, or add state to group_by',
    ],
    ['metric=revenue', "Unknown metric: 'revenue'. Use GET /v1/catalog to list the available metrics."],
    [
      'metric=gdp_usd&group_by=region',
      "Unknown metric: 'gdp_usd'. Use GET /v1/catalog to list the available metrics. gdp_usd is a metric of the dataset country: use metric=country&measure=gdp_usd",
    ],
    [
      'metric=fx&product=Poker',
      `Invalid filter dimension "product" for metric "fx". Valid dimensions: ${DATASETS.find((d) => d.name === 'fx')!.dimensions.join(', ')}`,
    ],
  ];
  for (const [query, error] of refused) {
    const res = await service.get(`/v1/aggregate?${query}`);
    assert.is(res.status, 400, query);
    assert.equal(res.json, { error }, query);
  }
  const fields: Array<[string, string, string]> = [
    ['fx=USD', 'metric', 'Invalid type: Expected string but received undefined: metric is required, one of ggr, turnover, fx, country'],
    ['metric=ggr&fx=USD&group_by=year,region,country,state,category,product,channel', 'group_by', 'At most 6 dimensions'],
    ['metric=ggr&fx=USD&group_by=year,year', 'group_by', 'Each dimension may be grouped by once'],
    ['metric=ggr&fx=USD&rollup=yes', 'rollup', 'Expected true or false'],
    ['metric=ggr&fx=USD&limit=0', 'limit', 'Expected an integer from 1 to 1000'],
    ['metric=ggr&fx=USD&period=2020', 'period', 'Expected format: YYYY-MM-DD:YYYY-MM-DD'],
  ];
  for (const [query, field, message] of fields) {
    const res = await service.get(`/v1/aggregate?${query}`);
    assert.is(res.status, 400, query);
    assert.is(res.json.error, 'Invalid query parameters');
    assert.ok(res.json.details.fieldErrors[field]?.includes(message), `${query}: ${JSON.stringify(res.json.details)}`);
  }
});

values('a rate averages; the registry says what may be combined', async () => {
  assert.is(metricDef('inflation').kind, 'rate');
  const res = await service.get('/v1/aggregate?metric=country&measure=inflation&group_by=year&year=2020');
  assert.equal(res.json.meta.measures, ['inflation_avg']);
});

const limits = suite('aggregate: size and determinism');

limits('more groups than AGGREGATE_MAX_GROUPS: 400 naming the count', async () => {
  const small = await startTestService({ env: { AGGREGATE_MAX_GROUPS: '10' } });
  try {
    const groups = (await small.get('/v1/aggregate?metric=ggr&fx=USD&group_by=year')).json;
    assert.equal(groups, {
      error: `The aggregate has 31 groups, more than the 10 one request may return: filter to fewer rows or group by fewer dimensions`,
    });
    assert.is((await small.get('/v1/aggregate?metric=ggr&fx=USD&group_by=region')).status, 200);
  } finally {
    await small.stop();
  }
});

limits('the guard counts the groups before computing them: its count is the rows the aggregate then has', async () => {
  // Counted by DuckDB over the served table, levels and the state rule included; the served result counts them again.
  const queries = [
    'metric=ggr&fx=USD&group_by=country,state,year&rollup=true',
    'metric=turnover&group_by=fx,country,channel&rollup=true&period=2010-01-01:2014-12-31',
    'metric=ggr&group_by=state,fx&rollup=true&channel=Online&measure=ggr:max',
    'metric=country&group_by=region,country,temporal',
  ];
  const [whole, tiny] = await Promise.all([startTestService(), startTestService({ env: { AGGREGATE_MAX_GROUPS: '1' } })]);
  try {
    for (const query of queries) {
      const served = (await walkPages(whole, `/v1/aggregate?${query}`, 1000)).reduce((sum, page) => sum + page.data.length, 0);
      const refused = await tiny.get(`/v1/aggregate?${query}`);
      assert.is(refused.status, 400, query);
      assert.is(
        refused.json.error,
        `The aggregate has ${served} groups, more than the 1 one request may return: filter to fewer rows or group by fewer dimensions`,
        query,
      );
    }
  } finally {
    await Promise.all([whole.stop(), tiny.stop()]);
  }
});

limits('bodies are byte-identical across restarts and DUCKDB_THREADS', async () => {
  const bodies = await bodiesPerThreads(CASES.map((c) => `/v1/aggregate?metric=${c.metric}&${c.query}&rollup=true`));
  assert.equal(bodies[0], bodies[1]);
});

// A drop as another tool writes it: plain DuckDB, awkward names, two currencies, national and state rows.
const drop = suite('aggregate: a drop written by plain DuckDB');
let dropService: TestService;
let dropDir: string;
drop.before(async () => {
  const geo = `(VALUES ('Europe', 'Côte "d''Azur", Land', ''), ('Africa', 'Korea, Republic of', ''), ('North America', 'United States', ''),
    ('North America', 'United States', 'O''Brien, County'), ('North America', 'United States', 'Nevada')) AS g(region, country, state)`;
  const rows = `FROM ${geo}, (VALUES (2019), (2020), (2021)) AS y(year), (VALUES ('USD'), ('EUR')) AS f(fx), (VALUES ('Online'), ('Land')) AS c(channel)`;
  const sql: Record<string, string> = {
    ggr: `SELECT year::SMALLINT AS year, region, country, state, 'Betting' AS category, 'Sport Betting' AS product, channel, 'Onshore' AS sub_channel, fx,
            'Current' AS temporal, 'Reported' AS calculation, (year * 1.1 + length(country) * 0.01 + length(state) / 3 + (fx = 'EUR')::INT * 0.1)::DOUBLE AS ggr ${rows}`,
    turnover: `SELECT year, region, country, state, 'Betting' AS category, 'Sport Betting' AS product, channel, 'Onshore' AS sub_channel, fx,
            'Current' AS temporal, 'Reported' AS calculation, (year * 1e7 / 7)::FLOAT AS turnover ${rows}`,
    fx: `SELECT DISTINCT year, region, country, state, 'XOF' AS fx_local_currency, 'Current' AS temporal, 'Reported' AS calculation,
            year / 3.0 AS fx_constant_usd, 1 / 3 AS fx_current_eur, 0.1 AS fx_constant_eur, 600.25 AS fx_current_usd ${rows}`,
    country: `SELECT DISTINCT year, region, country, state, 'Current' AS temporal, 'Estimated' AS calculation, 1e-6 * year AS gdp_local_currency, 2.5e6 AS gdp_usd,
            (1000 + year)::BIGINT AS adult_population, -0.25 AS inflation ${rows}`,
    country_reference: `SELECT DISTINCT region, country, 'Tracked' AS country_type FROM ${geo}`,
  };
  dropDir = await publishDrop(sql, '2026-02');
  dropService = await startTestService({ dataDir: dropDir });
});
drop.after(async () => {
  await dropService.stop();
  await fs.rm(dropDir, { recursive: true, force: true });
});

drop('aggregates equal DuckDB over the published files, awkward names included', async () => {
  await compareCases(dropService, dropDir, '2026-02', [
    {
      name: 'ggr by country and state in EUR',
      metric: 'ggr',
      query: 'group_by=country,state&fx=EUR',
      groupBy: ['country', 'state'],
      measures: { ggr_sum: ['ggr', 'sum'] },
      where: "fx = 'EUR'",
    },
    {
      name: 'ggr by country, national rows',
      metric: 'ggr',
      query: 'group_by=fx,country&measure=ggr:avg&measure=ggr:sum',
      groupBy: ['fx', 'country'],
      measures: { ggr_avg: ['ggr', 'avg'], ggr_sum: ['ggr', 'sum'] },
      where: "state = ''",
    },
    {
      name: 'turnover of two states',
      metric: 'turnover',
      query: "group_by=year&fx=USD&state=Nevada&state=O'Brien,%20County",
      groupBy: ['year'],
      measures: { turnover_sum: ['turnover', 'sum'] },
      where: "fx = 'USD' AND state IN ('Nevada', 'O''Brien, County')",
    },
    {
      name: 'gdp in local currency per country',
      metric: 'country',
      query: 'group_by=country&measure=gdp_local_currency&measure=inflation:min',
      groupBy: ['country'],
      measures: { gdp_local_currency_sum: ['gdp_local_currency', 'sum'], inflation_min: ['inflation', 'min'] },
      where: "state = ''",
    },
  ]);
});

values.run();
limits.run();
drop.run();

// README's aggregate examples are what a reader copies first: each one must answer.
const readme = suite('aggregate: README examples run');
let readmeService: TestService;
readme.before(async () => {
  readmeService = await startTestService();
});
readme.after(() => readmeService.stop());

readme('every /v1/aggregate curl line of README.md answers 200 with groups', async () => {
  const readme = await fs.readFile(path.resolve(import.meta.dirname, '../README.md'), 'utf8');
  // The vintage examples need a second release; vintages.test.ts runs them.
  const text = readme.slice(readme.indexOf('### Aggregates'), readme.indexOf('### Releases and revisions'));
  const lines = [...text.matchAll(/^curl -s "\$BASE(\/v1\/aggregate\?[^"]+)"(.*)$/gm)];
  assert.ok(lines.length >= 4, 'README shows the aggregate examples');
  for (const [, pathAndQuery, rest] of lines) {
    const accept = /-H "Accept: ([^"]+)"/.exec(rest!)?.[1];
    const res = await readmeService.get(pathAndQuery!, accept ? { headers: { accept } } : {});
    assert.is(res.status, 200, `${pathAndQuery}: ${res.text}`);
    if (accept || pathAndQuery!.includes('format=csv')) assert.ok(res.text.split('\r\n').length > 3, pathAndQuery);
    else assert.ok(res.json.data.length > 0, pathAndQuery);
  }
});

readme.run();
