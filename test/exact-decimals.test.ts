import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { quoteLiteral } from '../src/duckdb/sql-text.ts';
import { FIXTURE_RELEASE, startTestService, type TestService } from './helpers/service.ts';

// Sums print as the decimals they are: each value of a release is the decimal its
// publisher wrote (the shortest text that reads back as its double), and an
// aggregate's sum, previous year and change are the exact decimal sums of those, digit
// for digit what DuckDB's DECIMAL(38, 12) gives over the same values, in JSON and CSV;
// Arrow carries the double nearest each; an average is that exact sum over the rows.

let service: TestService;
let duckdb: DuckDBConnection;
const decimals = suite('sums are the exact decimal sums of the values as written');
decimals.before(async () => {
  service = await startTestService();
  duckdb = await (await DuckDBInstance.create(':memory:')).connect();
});
decimals.after(async () => {
  await service.stop();
  duckdb.closeSync();
});

const file = (dataset: string) => quoteLiteral(path.join(service.dataDir, FIXTURE_RELEASE, `${dataset}.parquet`));
/** A value as written, exactly: through its shortest text, as DuckDB prints a double. */
const written = (column: string) => `${column}::VARCHAR::DECIMAL(38, 12)`;

/** A DECIMAL's text as the API prints a number: trailing zeros trimmed, `.0` on a whole number. */
function trimmed(text: string): string {
  const [whole, fraction = ''] = text.split('.');
  return `${whole}.${fraction.replace(/0+$/, '') || '0'}`;
}

/** Each group's value texts from an aggregate's raw JSON (the texts, not numbers parsed from them), keyed by its group tuple. */
async function jsonTexts(query: string, groupBy: readonly string[]): Promise<Map<string, Record<string, string>>> {
  const texts = new Map<string, Record<string, string>>();
  let cursor = '';
  for (let page = 0; page < 100; page++) {
    const res = await service.get(`/v1/aggregate?${query}&limit=1000${cursor && `&cursor=${encodeURIComponent(cursor)}`}`);
    assert.is(res.status, 200, res.text);
    const values = [...res.text.matchAll(/"values":\{([^}]*)\}/g)].map((m) =>
      Object.fromEntries(m[1]!.split(',').map((pair) => pair.split(':').map((part) => part.replace(/"/g, '')) as [string, string])),
    );
    for (const [i, row] of (res.json.data as any[]).entries()) texts.set(JSON.stringify(groupBy.map((d) => row.dimensions[d])), values[i]!);
    if (!res.json.pagination.has_more) return texts;
    cursor = res.json.pagination.cursor;
  }
  throw new Error(`${query}: more than 100 pages`);
}

/** DuckDB's rows for `sql`, each with its group tuple (the columns named in `groupBy`) as the key. */
async function expected(sql: string, groupBy: readonly string[]): Promise<Map<string, Record<string, string | null>>> {
  const rows = (await duckdb.runAndReadAll(sql)).getRowObjectsJS();
  return new Map(
    rows.map((row) => [
      JSON.stringify(groupBy.map((d) => (d === 'year' ? Number(row[d]) : row[d]))),
      Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v === null ? null : String(v)])),
    ]),
  );
}

decimals('ggr and turnover sums by year and currency print the DECIMAL sums digit for digit, beyond 2^52 units too', async () => {
  let beyondDouble = 0;
  for (const metric of ['ggr', 'turnover']) {
    const groupBy = ['year', 'fx'];
    const served = await jsonTexts(`metric=${metric}&group_by=${groupBy.join(',')}`, groupBy);
    const want = await expected(
      `SELECT year, fx, sum(${written(metric)})::VARCHAR AS s FROM read_parquet(${file(metric)}) WHERE state = '' GROUP BY year, fx`,
      groupBy,
    );
    assert.is(served.size, want.size, metric);
    for (const [key, row] of want) {
      const text = trimmed(row.s!);
      assert.is(served.get(key)?.[`${metric}_sum`], text, `${metric} ${key}`);
      // Past 2^52 units of the last decimal a double no longer holds every such decimal.
      if (Math.abs(Number(text)) * 100 >= 2 ** 52) beyondDouble++;
    }
  }
  assert.ok(beyondDouble > 0, 'some sums are too long for a double, so their exact text is checked');
});

decimals('compare: prev and change are exact decimals; pct_change is the exact change over prev', async () => {
  const groupBy = ['country', 'year'];
  const served = await jsonTexts('metric=ggr&group_by=country,year&fx=USD&compare=previous_year', groupBy);
  const want = await expected(
    `WITH g AS (SELECT country, year, sum(${written('ggr')}) AS s FROM read_parquet(${file('ggr')}) WHERE fx = 'USD' AND state = '' GROUP BY country, year)
     SELECT a.country, a.year, a.s::VARCHAR AS s, b.s::VARCHAR AS prev, (a.s - b.s)::VARCHAR AS change,
            CASE WHEN b.s = 0 THEN NULL ELSE (a.s - b.s)::DOUBLE / b.s::DOUBLE END AS pct
     FROM g a LEFT JOIN g b ON a.country = b.country AND b.year = a.year - 1`,
    groupBy,
  );
  assert.is(served.size, want.size);
  let changes = 0;
  for (const [key, row] of want) {
    const got = served.get(key)!;
    assert.is(got.ggr_sum, trimmed(row.s!), `ggr ${key}`);
    assert.is(got.ggr_sum_prev, row.prev == null ? 'null' : trimmed(row.prev), `prev ${key}`);
    assert.is(got.ggr_sum_change, row.change == null ? 'null' : trimmed(row.change), `change ${key}`);
    assert.is(
      got.ggr_sum_pct_change === 'null' ? null : Number(got.ggr_sum_pct_change),
      row.pct === null ? null : Number(row.pct),
      `pct ${key}`,
    );
    if (row.change !== null) changes++;
  }
  assert.ok(changes > 100, `${changes} changes checked`);
});

decimals('an average of a rate is the exact decimal sum over the rows, correctly rounded', async () => {
  const groupBy = ['year', 'region'];
  const served = await jsonTexts('metric=fx&group_by=year,region&measure=fx_current_usd:avg', groupBy);
  const want = await expected(
    `SELECT year, region, sum(${written('fx_current_usd')})::DOUBLE / count(*) AS a FROM read_parquet(${file('fx')}) WHERE state = '' GROUP BY year, region`,
    groupBy,
  );
  assert.is(served.size, want.size);
  for (const [key, row] of want) assert.is(Number(served.get(key)!.fx_current_usd_avg), Number(row.a), key);
});

decimals('CSV prints the JSON digits; Arrow carries the double nearest each decimal', async () => {
  const query = 'metric=turnover&group_by=fx,year&year=2020&year=2021&compare=previous_year';
  const served = await jsonTexts(query, ['fx', 'year']);
  const csv = await service.get(`/v1/aggregate?${query}&limit=1000&format=csv`);
  assert.is(csv.status, 200);
  const [header, ...lines] = csv.text.trimEnd().split('\r\n');
  const columns = header!.split(',');
  assert.is(lines.length, served.size);
  for (const line of lines) {
    const fields = Object.fromEntries(line.split(',').map((field, i) => [columns[i]!, field]));
    const json = served.get(JSON.stringify([fields.fx, Number(fields.year)]))!;
    for (const key of ['turnover_sum', 'turnover_sum_prev', 'turnover_sum_change'])
      assert.is(fields[key] || 'null', json[key] ?? 'null', `${key} ${line}`);
  }
  const arrow = await fetch(`${service.url}/v1/aggregate?${query}&limit=1000&format=arrow`, { headers: { 'x-api-key': service.key } });
  assert.is(arrow.status, 200);
  const table = tableFromIPC(new Uint8Array(await arrow.arrayBuffer()));
  assert.is(table.schema.fields.find((f) => f.name === 'turnover_sum')!.type.toString(), 'Float64');
  for (const row of table.toArray()) {
    const json = served.get(JSON.stringify([row.fx, row.year]))!;
    assert.is(row.turnover_sum, Number(json.turnover_sum), `${row.fx} ${row.year}`);
  }
});

decimals.run();
