import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { RecordBatchStreamWriter, tableFromIPC } from 'apache-arrow';
import pino from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Database } from '../src/duckdb/database.ts';
import { quoteIdent, quoteLiteral } from '../src/duckdb/sql-text.ts';
import { checkKeysetOrder } from '../src/query/page.ts';
import { DATASETS, INTEGER_DIMENSIONS } from '../src/registry.ts';
import { type LoadedRelease, loadRelease } from '../src/releases/load-release.ts';
import { latestRelease } from '../src/releases/on-disk.ts';
import { ArrowRenderer } from '../src/render/arrow-renderer.ts';
import { csvHeader, csvSyntax } from '../src/render/csv-syntax.ts';
import { formatDouble, MAX_DOUBLE_LENGTH, writeDouble } from '../src/render/json-number.ts';
import { jsonSyntax } from '../src/render/json-syntax.ts';
import { TextRenderer } from '../src/render/text-renderer.ts';
import { ColumnStore } from '../src/store/column-store.ts';
import { FIXTURE_RELEASE, fixtureDataDir, startTestService } from './helpers/service.ts';

// The columnar store serves exactly the bytes DuckDB's to_json made of each row.

let duck: DuckDBInstance;
let sql: DuckDBConnection;

const numbers = suite('doubles print as DuckDB to_json prints them');
numbers.before(async () => {
  duck = await DuckDBInstance.create(':memory:');
  sql = await duck.connect();
});
numbers.after(() => {
  sql.closeSync();
  duck.closeSync();
});

/** What DuckDB's to_json prints for each double, the double passed as its exact shortest text. */
async function duckdbJson(values: readonly number[]): Promise<string[]> {
  const list = values.map((x) => quoteLiteral(Object.is(x, -0) ? '-0' : String(x))).join(', ');
  const reader = await sql.runAndReadAll(`SELECT to_json(v::DOUBLE)::VARCHAR FROM unnest([${list}]) WITH ORDINALITY AS t(v, i) ORDER BY i`);
  return reader.getRows().map(([text]) => String(text));
}

function written(x: number): string {
  const out = Buffer.alloc(MAX_DOUBLE_LENGTH + 8);
  const end = writeDouble(out, 3, x);
  return out.toString('latin1', 3, end);
}

// Awkward on purpose: integral values, the switch to exponents at 1e21 and 1e-7,
// the extremes, negative zero, cents that are not exact in binary, 15-17 digit values.
const TABLE: Array<[number, string]> = [
  [0, '0.0'],
  [-0, '-0.0'],
  [1, '1.0'],
  [-1, '-1.0'],
  [748386, '748386.0'],
  [0.1, '0.1'],
  [0.3, '0.3'],
  [0.05, '0.05'],
  [-0.07, '-0.07'],
  [4148.57, '4148.57'],
  [21160607.59, '21160607.59'],
  [3220082649377.93, '3220082649377.93'],
  // biome-ignore lint/correctness/noPrecisionLoss: a literal that rounds to the double printed
  [99999999999999.99, '99999999999999.98'],
  [1e15, '1000000000000000.0'],
  [1e20, '100000000000000000000.0'],
  [123456789012345680000, '123456789012345680000.0'],
  [1e21, '1e21'],
  [-1e21, '-1e21'],
  [1.5e300, '1.5e300'],
  [Number.MAX_VALUE, '1.7976931348623157e308'],
  [0.000001, '0.000001'],
  [1e-7, '1e-7'],
  [1.23e-18, '1.23e-18'],
  [Number.MIN_VALUE, '5e-324'],
  [-2.2250738585072014e-308, '-2.2250738585072014e-308'],
  // biome-ignore lint/correctness/noPrecisionLoss: a literal that rounds to the double printed
  [9007199254740993, '9007199254740992.0'],
  [0.1 + 0.2, '0.30000000000000004'],
  [1 / 3, '0.3333333333333333'],
  [-1234.5678, '-1234.5678'],
  [999999999999999.9, '999999999999999.9'],
];

numbers('a table of awkward values: the text, DuckDB agrees, and it reads back as the same double', async () => {
  const duckdb = await duckdbJson(TABLE.map(([x]) => x));
  TABLE.forEach(([x, text], i) => {
    assert.is(formatDouble(x), text, `formatDouble(${x})`);
    assert.is(written(x), text, `writeDouble(${x})`);
    assert.is(duckdb[i], text, `DuckDB to_json(${x})`);
    assert.ok(Object.is(JSON.parse(text), x), `${text} reads back as ${x}`);
    assert.ok(text.length <= MAX_DOUBLE_LENGTH, text);
  });
});

numbers('thousands of random doubles and cent amounts print as DuckDB prints them', async () => {
  // A fixed-seed generator, so a failure reproduces.
  let state = 0x2545f491;
  const random = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
  const bits = new DataView(new ArrayBuffer(8));
  const values: number[] = [];
  while (values.length < 3000) {
    bits.setUint32(0, random() * 2 ** 32);
    bits.setUint32(4, random() * 2 ** 32);
    const x = bits.getFloat64(0);
    if (Number.isFinite(x)) values.push(x);
  }
  for (let i = 0; i < 3000; i++) values.push(Math.round((random() - 0.5) * 10 ** (2 + (i % 16))) / 100);
  for (let e = -30; e <= 30; e++) values.push(10 ** e, -(10 ** e) * 3.7, 2 ** e);
  const duckdb = await duckdbJson(values);
  values.forEach((x, i) => {
    assert.is(formatDouble(x), duckdb[i], `formatDouble(${x})`);
    assert.is(written(x), duckdb[i], `writeDouble(${x})`);
    assert.ok(Object.is(JSON.parse(duckdb[i]!), x));
  });
});

/** Doubles chosen to be long: 17 significant digits at every decimal exponent, both signs, and the edges. */
function longDoubles(): number[] {
  let state = 0x9e3779b9;
  const random = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
  const digits = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 10)).join('');
  const bits = new DataView(new ArrayBuffer(8));
  const neighbours = (x: number) => {
    bits.setFloat64(0, x);
    const up = bits.getBigUint64(0) + 1n;
    const down = bits.getBigUint64(0) - 1n;
    bits.setBigUint64(0, up);
    const a = bits.getFloat64(0);
    bits.setBigUint64(0, down);
    return [a, bits.getFloat64(0)];
  };
  const values: number[] = [
    0,
    -0,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    Number.MIN_VALUE,
    -Number.MIN_VALUE,
    2.2250738585072014e-308,
    -2.2250738585072014e-308,
  ];
  for (let e = -323; e <= 308; e++) {
    for (const sign of ['', '-']) {
      for (let i = 0; i < 3; i++) values.push(Number(`${sign}${1 + Math.floor(random() * 9)}.${digits(16)}e${e}`));
      const power = Number(`${sign}1e${e}`);
      if (power !== 0 && Number.isFinite(power)) values.push(power, ...neighbours(power));
    }
  }
  // Subnormals: exponent bits zero, random mantissas.
  for (let i = 0; i < 200; i++) {
    bits.setUint32(0, (i % 2 ? 0x80000000 : 0) | Math.floor(random() * 0x100000));
    bits.setUint32(4, random() * 2 ** 32);
    values.push(bits.getFloat64(0));
  }
  return values.filter(Number.isFinite);
}

numbers(
  'the longest texts: every decimal exponent, both signs, 17 digits, subnormals and the extremes print as DuckDB prints them, within MAX_DOUBLE_LENGTH',
  async () => {
    const values = longDoubles();
    const duckdb = await duckdbJson(values);
    let longest = 0;
    values.forEach((x, i) => {
      assert.is(formatDouble(x), duckdb[i], `formatDouble(${x})`);
      assert.is(written(x), duckdb[i], `writeDouble(${x})`);
      longest = Math.max(longest, duckdb[i]!.length);
    });
    assert.is(longest, MAX_DOUBLE_LENGTH, 'the bound is the longest text there is, not a guess');
  },
);

numbers('JSON, CSV and Arrow pages of the longest values: every byte, none cut short', async () => {
  // The issue's values (25 characters each) fill a whole page, then every kind of long value.
  const values = [...Array.from({ length: 4000 }, (_, i) => (i % 2 ? -1.2345678901234567e-6 : -1.0000000000000002e-6)), ...longDoubles()];
  const duckdb = await duckdbJson(values);
  // One dimension, four metrics (the fx dataset's shape), each row all long values.
  const rows = Math.floor(values.length / 4);
  const metrics = ['m0', 'm1', 'm2', 'm3'].map((name, m) => ({
    name,
    values: Float64Array.from({ length: rows }, (_, r) => values[r * 4 + m]!),
    scale: null,
  }));
  const dimension = { name: 'year', dictionary: { values: [2020], json: ['2020'] }, codes: new Uint8Array(rows) };
  const store = await ColumnStore.build(rows, [dimension], metrics, 1);
  const text = (r: number, m: number) => duckdb[r * 4 + m]!;
  const json = await TextRenderer.create(store, jsonSyntax(store, 'financial'));
  const csv = await TextRenderer.create(store, csvSyntax(store));
  const arrow = new ArrowRenderer(store);
  // A page of 1000 rows of the longest values alone (slack from shorter rows cannot hide a short buffer), then every row.
  for (const page of [Array.from({ length: 1000 }, (_, r) => r), Array.from({ length: rows }, (_, r) => r)]) {
    const body = json.render(page, '[', ']').toString();
    const expectedJson = `[${page.map((r) => `{"dimensions":{"year":2020},"values":{${metrics.map((m, k) => `"${m.name}":${text(r, k)}`).join(',')}}}`).join(',')}]`;
    assert.ok(body === expectedJson, `JSON page of ${page.length} rows equals DuckDB's texts`);
    assert.equal(
      JSON.parse(body).map((row: any) => Object.values(row.values)),
      page.map((r) => [0, 1, 2, 3].map((m) => values[r * 4 + m])),
    );
    const lines = csv.render(page, csvHeader(store), '').toString();
    assert.ok(
      lines === `year,m0,m1,m2,m3\r\n${page.map((r) => `2020,${[0, 1, 2, 3].map((m) => text(r, m)).join(',')}\r\n`).join('')}`,
      `CSV page of ${page.length} rows equals DuckDB's texts`,
    );
    const table = tableFromIPC(arrow.render(page));
    for (const r of page) {
      for (const m of [0, 1, 2, 3]) assert.ok(Object.is(table.getChildAt(m + 1)!.get(r), values[r * 4 + m]), `Arrow row ${r} m${m}`);
    }
  }
});

numbers.run();

// ---------------------------------------------------------------------------

const rows = suite('every row of the test release, byte for byte');
let db: Database;
let release: LoadedRelease;
let dir: string;
rows.before(async () => {
  dir = path.join(await fixtureDataDir(), FIXTURE_RELEASE);
  db = await Database.open({ connections: 1, threads: 1 });
  const connection = await db.connect();
  release = await loadRelease(connection, (await latestRelease(path.dirname(dir)))!, pino({ level: 'silent' }));
  connection.closeSync();
});
rows.after(() => db.close());

for (const def of DATASETS) {
  rows(`${def.name}: each row renders as DuckDB's to_json of the Parquet row, in serving order`, async () => {
    // The oracle, written independently of the loader: to_json of the row straight
    // from the file, numbered in the documented order (sorted by every dimension).
    const struct = (names: readonly string[], cast: (n: string) => string) =>
      `{${names.map((n) => `${quoteLiteral(n)}: ${cast(n)}`).join(', ')}}`;
    const dim = (n: string) => `${quoteIdent(n)}::${INTEGER_DIMENSIONS.has(n) ? 'INTEGER' : 'VARCHAR'}`;
    const body =
      def.kind === 'financial'
        ? `{'dimensions': ${struct(def.dimensions, dim)}, 'values': ${struct(def.metrics, (n) => `${quoteIdent(n)}::DOUBLE`)}}`
        : struct(def.dimensions, dim);
    const file = quoteLiteral(path.join(dir, `${def.name}.parquet`));
    const expected = await db.use(async (lease) =>
      (
        await lease.connection.runAndReadAll(
          `SELECT to_json(${body})::VARCHAR FROM read_parquet(${file}) ORDER BY ${def.dimensions.map(quoteIdent).join(', ')}`,
        )
      )
        .getRows()
        .map(([json]) => String(json)),
    );
    const {
      rows: { json },
      store,
    } = release.datasets.get(def.name)!;
    assert.is(store.rowCount, expected.length);
    assert.ok(expected.length > 100, `fixture too small: ${expected.length}`);
    for (let rid = 0; rid < expected.length; rid++) {
      const got = json.render([rid], '', '').toString();
      if (got !== expected[rid]) assert.fixture(got, expected[rid]!, `${def.name} row ${rid}`);
    }
    // And as pages: the same rows joined, between the envelope's text.
    const all = Array.from({ length: expected.length }, (_, rid) => rid);
    assert.ok(json.render(all, '{"data":[', ']}').equals(Buffer.from(`{"data":[${expected.join(',')}]}`)));
  });
}

rows.run();

// ---------------------------------------------------------------------------

const arrow = suite('Arrow pages: the bytes apache-arrow writes, the values the JSON shows');

for (const def of DATASETS) {
  arrow(`${def.name}: pages of 0, 1, 7, 1000 and every row`, () => {
    const {
      rows: { arrow: renderer, json },
      store,
    } = release.datasets.get(def.name)!;
    const every = Array.from({ length: store.rowCount }, (_, rid) => rid);
    const pages = [[], [0], every.slice(5, 12), every.filter((rid) => rid % 3 === 1).slice(0, 1000), every];
    for (const rids of pages) {
      const bytes = renderer.render(rids);
      const table = tableFromIPC(bytes);
      assert.is(table.numRows, rids.length);
      // Read back and written again by apache-arrow's own stream writer: the same bytes.
      const rewritten = RecordBatchStreamWriter.writeAll(table.batches).toUint8Array(true);
      assert.ok(Buffer.from(rewritten).equals(bytes), `${def.name}, ${rids.length} rows: apache-arrow writes the same stream`);
      const expected = (JSON.parse(json.render(rids, '[', ']').toString()) as any[]).map((row) =>
        def.kind === 'financial' ? { ...row.dimensions, ...row.values } : row,
      );
      assert.equal(
        table.toArray().map((row) => ({ ...row.toJSON() })),
        expected,
        `${def.name}, ${rids.length} rows`,
      );
    }
  });
}

arrow.run();

// ---------------------------------------------------------------------------

const keyset = suite('keyset order guard');

keyset('rids must come after the cursor and strictly increase', () => {
  checkKeysetOrder([], 5, 't');
  checkKeysetOrder([0, 1, 7], -1, 't');
  for (const [rids, after] of [
    [[3, 3], -1],
    [[4, 2], -1],
    [[5], 5],
    [[1, 9], 2],
  ] as const) {
    assert.throws(() => checkKeysetOrder(rids, after, '"r"."ggr"'), /not scanned in rid order/, JSON.stringify([rids, after]));
  }
});

keyset('a table whose storage order stops matching rid answers a logged 500, not a page', async () => {
  const service = await startTestService();
  try {
    const query = '/v1/financials?metric=ggr&limit=5';
    const before = await service.get(query);
    assert.is(before.status, 200);
    const { table } = service.running.services.releases.current()!.datasets.get('ggr')!;
    // Rows 0 and 1 swap rids in place: a scan now meets rid 1 before rid 0.
    await service.running.services.db.use((lease) => lease.connection.run(`UPDATE ${table} SET rid = 1 - rid WHERE rid IN (0, 1)`));
    // Another limit: the same request would be answered from the response cache.
    const res = await service.get(query.replace('limit=5', 'limit=6'));
    assert.is(res.status, 500);
    assert.equal(res.json, { error: 'Internal server error' });
    const logged = service.logs.find((line) => line.level >= 50 && /not scanned in rid order/.test(line.err?.message ?? ''));
    assert.ok(logged, 'the failure is logged with its reason');
  } finally {
    await service.stop();
  }
});

keyset.run();
