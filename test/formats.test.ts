import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { type Table, tableFromIPC } from 'apache-arrow';
import { request } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CursorCodec } from '../src/query/cursor.ts';
import { DATASETS } from '../src/registry.ts';
import { parseCsv } from './helpers/csv.ts';
import { FIXTURE_RELEASE, startTestService, type TestService, tempDir } from './helpers/service.ts';

// CSV and Arrow by Accept on /v1/financials and /v1/reference: bytes and headers, the
// same rows as the JSON answer (read back by apache-arrow and by DuckDB), 406, and
// Link / X-Next-Cursor through whole walks.

const CSV = 'text/csv';
const ARROW = 'application/vnd.apache.arrow.stream';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

let service: TestService;
let dir: string;

async function raw(pathAndQuery: string, headers: Record<string, string> = {}): Promise<Raw> {
  const res = await request(`${service.url}${pathAndQuery}`, { headers: { 'x-api-key': service.key, ...headers } });
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
}

const ok = async (pathAndQuery: string, accept?: string): Promise<Raw> => {
  const res = await raw(pathAndQuery, accept ? { accept } : {});
  assert.is(res.status, 200, `${accept} ${pathAndQuery}: ${res.body.toString().slice(0, 300)}`);
  return res;
};

/** The JSON answer's rows as flat objects: dimensions then values, the CSV's columns. */
const flat = (rows: any[]) => rows.map((row) => (row.dimensions ? { ...row.dimensions, ...row.values } : row));

/** Each metric number of a JSON body as it is printed there, row by row. */
function printedNumbers(json: string, metrics: readonly string[]): string[][] {
  const data = json.slice(json.indexOf('"data":['), json.lastIndexOf('],"pagination"'));
  return data
    .split('"values":{')
    .slice(1)
    .map((row) => metrics.map((m) => new RegExp(`"${m}":([^,}]+)`).exec(row)![1]!));
}

const arrowRows = (table: Table) => table.toArray().map((row) => ({ ...row.toJSON() }));

async function duckdb<T>(work: (run: (sql: string) => Promise<Record<string, unknown>[]>) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    return await work(async (sql) => (await connection.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[]);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

const Bytes = suite('formats: bytes and headers');
Bytes.before(async () => {
  service = await startTestService();
  dir = await tempDir();
});
Bytes.after(async () => {
  await service.stop();
  await fs.rm(dir, { recursive: true, force: true });
});

const QUERIES = [
  '/v1/financials?metric=ggr&country=France&country=Spain&year=2021&limit=40',
  '/v1/financials?metric=fx&region=Europe&limit=25',
  '/v1/financials?metric=country&calculation=Reported&limit=30',
  '/v1/reference?dataset=country_reference&limit=60',
];

Bytes('no Accept, */*, application/json, application/* and a ranked list all get the same JSON', async () => {
  const path = QUERIES[0]!;
  const plain = await ok(path);
  assert.is(plain.headers['content-type'], 'application/json; charset=utf-8');
  for (const accept of ['*/*', 'application/json', 'application/*', `${CSV};q=0.5, application/json`, 'text/html, */*;q=0.1']) {
    const res = await ok(path, accept);
    assert.ok(res.body.equals(plain.body), accept);
    assert.is(res.headers['content-type'], 'application/json; charset=utf-8', accept);
  }
});

Bytes('CSV: header row, dimension then metric columns, RFC 4180 quoting, numbers printed as in JSON', async () => {
  for (const path of QUERIES) {
    const json = await ok(path);
    const csv = await ok(path, CSV);
    assert.is(csv.headers['content-type'], 'text/csv; charset=utf-8; header=present');
    const def = DATASETS.find((d) => path.includes(`=${d.name}&`))!;
    const [header, ...rows] = parseCsv(csv.body.toString());
    assert.equal(header, [...def.dimensions, ...def.metrics], path);
    const expected = flat(JSON.parse(json.body.toString()).data);
    assert.ok(expected.length > 0, path);
    assert.is(rows.length, expected.length, path);
    const numbers = printedNumbers(json.body.toString(), def.metrics);
    rows.forEach((row, i) => {
      assert.equal(
        row.slice(0, def.dimensions.length),
        def.dimensions.map((d) => String(expected[i]![d])),
        `${path} row ${i}`,
      );
      if (def.metrics.length) assert.equal(row.slice(def.dimensions.length), numbers[i], `${path} row ${i}: numbers`);
    });
  }
});

Bytes('CSV quoting: empty values are "", commas and quotes are quoted', async () => {
  const csv = (await ok('/v1/financials?metric=ggr&year=2021&limit=1000', CSV)).body.toString();
  assert.match(csv, /,"",/, 'an empty state is written as ""');
  assert.not.match(csv, /,,/, 'no unquoted empty field');
  const { csvField } = await import('../src/render/csv-syntax.ts');
  assert.is(csvField("Côte d'Ivoire"), "Côte d'Ivoire");
  assert.is(csvField('Bosnia, Herzegovina'), '"Bosnia, Herzegovina"');
  assert.is(csvField('the "Big" one'), '"the ""Big"" one"');
  assert.is(csvField('two\r\nlines'), '"two\r\nlines"');
  assert.is(csvField(2021), '2021');
});

Bytes('Arrow: a stream apache-arrow reads; dictionaries for text, Int32 year, Float64 metrics; the JSON rows', async () => {
  for (const path of QUERIES) {
    const json = JSON.parse((await ok(path)).body.toString());
    const arrow = await ok(path, ARROW);
    assert.is(arrow.headers['content-type'], ARROW);
    const table = tableFromIPC(arrow.body);
    const def = DATASETS.find((d) => path.includes(`=${d.name}&`))!;
    assert.equal(
      table.schema.fields.map((f) => f.name),
      [...def.dimensions, ...def.metrics],
    );
    for (const field of table.schema.fields) {
      const expected = field.name === 'year' ? 'Int32' : def.metrics.includes(field.name) ? 'Float64' : /^Dictionary<Int(8|16|32), Utf8>$/;
      if (typeof expected === 'string') assert.is(String(field.type), expected, `${path}: ${field.name}`);
      else assert.match(String(field.type), expected, `${path}: ${field.name}`);
      assert.is(field.nullable, false);
    }
    assert.equal(arrowRows(table), flat(json.data), path);
  }
});

Bytes('an empty page is a valid empty answer in every format', async () => {
  const path = '/v1/financials?metric=ggr&country=Atlantis';
  assert.is(JSON.parse((await ok(path)).body.toString()).data.length, 0);
  assert.is((await ok(path, CSV)).body.toString(), `${DATASETS[0]!.dimensions.join(',')},ggr\r\n`);
  const table = tableFromIPC((await ok(path, ARROW)).body);
  assert.is(table.numRows, 0);
  assert.is(table.schema.fields.length, DATASETS[0]!.dimensions.length + 1);
});

Bytes('DuckDB reads the CSV answer back (read_csv) as the JSON rows', async () => {
  for (const path of QUERIES) {
    const json = JSON.parse((await ok(path)).body.toString());
    const file = `${dir}/${QUERIES.indexOf(path)}.csv`;
    await fs.writeFile(file, (await ok(path, CSV)).body);
    const def = DATASETS.find((d) => path.includes(`=${d.name}&`))!;
    const types = [
      ...def.dimensions.map((d) => `'${d}': '${d === 'year' ? 'INTEGER' : 'VARCHAR'}'`),
      ...def.metrics.map((m) => `'${m}': 'DOUBLE'`),
    ];
    // `""` is an empty string, not NULL.
    const rows = await duckdb((run) =>
      run(`SELECT * FROM read_csv('${file}', header = true, columns = {${types.join(', ')}}, allow_quoted_nulls = false)`),
    );
    assert.equal(rows, flat(json.data), path);
  }
});

/** What the test uses of duckdb-wasm's blocking Node build (its typings are not reachable through the package's exports). */
interface WasmDuckDB {
  createDuckDB(
    bundles: object,
    logger: unknown,
    runtime: unknown,
  ): Promise<{
    instantiate(): Promise<unknown>;
    connect(): {
      insertArrowFromIPCStream(ipc: Uint8Array, options: { name: string }): void;
      query(sql: string): { toArray(): Array<{ toJSON(): Record<string, any> }> };
      close(): void;
    };
    reset(): void;
  }>;
  VoidLogger: new () => unknown;
  NODE_RUNTIME: unknown;
}

Bytes('DuckDB reads the Arrow answer back as the JSON rows', async () => {
  // The native DuckDB here has no Arrow IPC reader offline (core has none; the
  // nanoarrow extension is downloaded on first use), so this is duckdb-wasm: the same
  // engine built for WebAssembly, whose Arrow IPC insert is DuckDB's own Arrow scan.
  const require = createRequire(import.meta.url);
  const entry = require.resolve('@duckdb/duckdb-wasm/dist/duckdb-node-blocking.cjs');
  const wasm = require(entry) as WasmDuckDB;
  const dist = path.dirname(entry);
  const bundles = {
    mvp: { mainModule: path.join(dist, 'duckdb-mvp.wasm'), mainWorker: '' },
    eh: { mainModule: path.join(dist, 'duckdb-eh.wasm'), mainWorker: '' },
  };
  const db = await wasm.createDuckDB(bundles, new wasm.VoidLogger(), wasm.NODE_RUNTIME);
  await db.instantiate();
  const connection = db.connect();
  try {
    for (const [i, path] of QUERIES.entries()) {
      const json = JSON.parse((await ok(path)).body.toString());
      connection.insertArrowFromIPCStream((await ok(path, ARROW)).body, { name: `answer${i}` });
      const types = connection
        .query(`SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'answer${i}' ORDER BY ordinal_position`)
        .toArray()
        .map((r) => r.toJSON());
      for (const { column_name: name, data_type: type } of types) {
        assert.is(
          type,
          name === 'year' ? 'INTEGER' : json.data[0]?.values && name in json.data[0].values ? 'DOUBLE' : 'VARCHAR',
          `${path}: ${name}`,
        );
      }
      const rows = connection
        .query(`SELECT * FROM answer${i}`)
        .toArray()
        .map((r) => ({ ...r.toJSON() }));
      assert.equal(rows, flat(json.data), path);
    }
  } finally {
    connection.close();
    db.reset();
  }
});

Bytes.run();

const Refused = suite('formats: 406 and errors');
Refused.before(async () => {
  service = await startTestService();
});
Refused.after(() => service.stop());

Refused('an Accept naming nothing served is 406 in JSON, listing what is served', async () => {
  for (const accept of ['text/html', 'application/xml', 'image/*', 'application/json;q=0, text/csv;q=0, */*;q=0']) {
    for (const path of ['/v1/financials?metric=ggr&limit=2', '/v1/reference?dataset=country_reference']) {
      const res = await raw(path, { accept });
      assert.is(res.status, 406, `${accept} ${path}`);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.equal(JSON.parse(res.body.toString()), {
        error: `Not acceptable: this endpoint serves application/json, text/csv, ${ARROW} (choose one with the Accept header, or with format=json|csv|arrow)`,
      });
      assert.is(res.headers['cache-control'], 'no-store');
      assert.ok(res.headers['x-ratelimit-remaining'], 'still a counted request');
    }
  }
});

Refused('errors are JSON whatever Accept asks for', async () => {
  for (const accept of [CSV, ARROW]) {
    for (const [path, status] of [
      ['/v1/financials?metric=nope', 400],
      ['/v1/financials?metric=ggr&limit=0', 400],
      ['/v1/reference?dataset=ggr', 400],
    ] as const) {
      const res = await raw(path, { accept });
      assert.is(res.status, status, `${accept} ${path}`);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.ok(JSON.parse(res.body.toString()).error);
    }
    const keyless = await request(`${service.url}/v1/financials?metric=ggr`, { headers: { accept } });
    assert.is(keyless.statusCode, 401);
    assert.equal(await keyless.body.json(), { error: 'Missing x-api-key header' });
  }
});

Refused.run();

const Cache = suite('formats: cached and ETagged apart');
Cache.before(async () => {
  service = await startTestService();
});
Cache.after(() => service.stop());

Cache('each format has its own ETag and body, Vary: Accept, Accept-Encoding; 304 per format; hits are the same bytes', async () => {
  const path = '/v1/financials?metric=turnover&region=Asia%20-%20ME&limit=50';
  const etags = new Set<string>();
  for (const accept of ['application/json', CSV, ARROW]) {
    for (const coding of ['identity', 'br']) {
      const first = await ok(path, accept);
      const headers = { accept, 'accept-encoding': coding };
      const miss = await raw(path, headers);
      const hit = await raw(path, headers);
      assert.ok(miss.body.equals(hit.body), `${accept} ${coding}: a hit is the same bytes`);
      assert.is(miss.headers.etag, hit.headers.etag);
      assert.is(hit.headers.vary, 'Accept, Accept-Encoding');
      assert.is(hit.headers.link, first.headers.link);
      etags.add(String(hit.headers.etag));
      const notModified = await raw(path, { ...headers, 'if-none-match': String(hit.headers.etag) });
      assert.is(notModified.status, 304, `${accept} ${coding}`);
      assert.is(notModified.headers.vary, 'Accept, Accept-Encoding');
    }
  }
  assert.is(etags.size, 6, 'one ETag per format and coding');
  const json = await raw(path, { 'if-none-match': [...etags].find((e) => e.endsWith('-br"'))! });
  assert.is(json.status, 200, "another format's ETag does not validate");
});

Cache.run();

const Links = suite('formats: Link and X-Next-Cursor through whole walks');
Links.before(async () => {
  service = await startTestService();
});
Links.after(() => service.stop());

/** Follows `Link: rel="next"` from `start` to the end; returns every response. */
async function followLinks(start: string, accept?: string): Promise<Raw[]> {
  const pages: Raw[] = [];
  for (let next: string | undefined = start; next; ) {
    const res: Raw = await ok(next, accept);
    pages.push(res);
    const link = res.headers.link as string | undefined;
    next = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1] : undefined;
    if (link) assert.ok(pages.length < 1000, 'the walk ends');
  }
  return pages;
}

Links('JSON: Link points at the next page while has_more; the walk equals the cursor walk', async () => {
  const start = '/v1/financials?country=France&metric=ggr&country=Spain&limit=9';
  const pages = await followLinks(start);
  assert.ok(pages.length > 3, `${pages.length} pages`);
  const bodies = pages.map((p) => JSON.parse(p.body.toString()));
  bodies.forEach((body, i) => {
    const link = pages[i]!.headers.link;
    assert.is(body.pagination.has_more, i < pages.length - 1);
    if (!body.pagination.has_more) {
      assert.is(link, undefined, 'no Link on the last page');
      return;
    }
    // The same query as sent, parameter order kept, with the new cursor.
    assert.is(
      link,
      `</v1/financials?country=France&metric=ggr&country=Spain&limit=9&cursor=${encodeURIComponent(body.pagination.cursor)}>; rel="next"`,
    );
    assert.is(pages[i]!.headers['x-next-cursor'], undefined, 'JSON carries the cursor in its body');
  });
});

Links('CSV and Arrow: Link and X-Next-Cursor on every page but the last; the rows of the whole walk are the JSON walk', async () => {
  const start = '/v1/financials?metric=fx&region=Europe&limit=40';
  const json = (await followLinks(start)).flatMap((p) => flat(JSON.parse(p.body.toString()).data));
  for (const accept of [CSV, ARROW]) {
    const pages = await followLinks(start, accept);
    assert.is(pages.length, Math.ceil(json.length / 40), accept);
    pages.forEach((page, i) => {
      const last = i === pages.length - 1;
      const cursor = page.headers['x-next-cursor'];
      assert.is(cursor === undefined, last, `${accept} page ${i}`);
      if (!last) assert.ok(String(page.headers.link).includes(`&cursor=${cursor}>`));
    });
    const numeric = new Set(['year', ...DATASETS.find((d) => d.name === 'fx')!.metrics]);
    const rows =
      accept === ARROW
        ? pages.flatMap((p) => arrowRows(tableFromIPC(p.body)))
        : pages.flatMap((p) => {
            const [header, ...lines] = parseCsv(p.body.toString());
            return lines.map((line) => Object.fromEntries(line.map((v, k) => [header![k]!, numeric.has(header![k]!) ? Number(v) : v])));
          });
    assert.equal(rows, json, accept);
  }
});

Links('a cursor pages the format it was issued in, named by Accept or by format=; in another format it is refused', async () => {
  const first = await ok('/v1/reference?dataset=country_reference&limit=50', ARROW);
  const cursor = String(first.headers['x-next-cursor']);
  const whole = JSON.parse((await ok('/v1/reference?dataset=country_reference&limit=100')).body.toString());
  const second = tableFromIPC((await ok(`/v1/reference?dataset=country_reference&limit=50&format=arrow&cursor=${cursor}`)).body);
  assert.equal(arrowRows(second), whole.data.slice(50, 100));
  for (const [other, accept] of [
    ['', undefined],
    ['', CSV],
    ['&format=json', ARROW],
    ['&format=csv', undefined],
  ] as const) {
    const refused = await raw(`/v1/reference?dataset=country_reference&limit=50${other}&cursor=${cursor}`, accept ? { accept } : {});
    assert.equal(
      [refused.status, JSON.parse(refused.body.toString())],
      [400, { error: 'Invalid pagination cursor' }],
      `${other} ${accept}`,
    );
  }
  const json = JSON.parse((await ok('/v1/reference?dataset=country_reference&limit=50')).body.toString());
  assert.is(
    (await raw(`/v1/reference?dataset=country_reference&limit=50&cursor=${json.pagination.cursor}`, { accept: CSV })).status,
    400,
    'a JSON cursor does not page CSV',
  );
});

Links('cursors issued before they named a format page every format, as they did', async () => {
  const secret = (await fs.readFile(path.join(service.stateDir, 'cursor-secret'), 'utf8')).trim();
  const legacy = new CursorCodec(Buffer.from(secret, 'hex')).encode(
    { release: FIXTURE_RELEASE, dataset: 'country_reference', filters: new Map() },
    49,
  );
  assert.match(legacy, /^[0-9a-z]+\.[A-Za-z0-9_-]{22}\.[0-9a-z]+$/, 'no format in the token');
  const whole = JSON.parse((await ok('/v1/reference?dataset=country_reference&limit=100')).body.toString());
  const json = JSON.parse((await ok(`/v1/reference?dataset=country_reference&limit=50&cursor=${legacy}`)).body.toString());
  assert.equal(json.data, whole.data.slice(50, 100));
  assert.equal(
    arrowRows(tableFromIPC((await ok(`/v1/reference?dataset=country_reference&limit=50&cursor=${legacy}`, ARROW)).body)),
    whole.data.slice(50, 100),
  );
});

Links.run();

const Named = suite('formats: format= in the URL');
Named.before(async () => {
  service = await startTestService();
});
Named.after(() => service.stop());

// Each endpoint's URL without a format, and the formats format= may name there.
const ENDPOINTS = [
  ['/v1/financials?metric=ggr&country=France&year=2024&limit=20', ['json', 'csv', 'arrow']],
  ['/v1/reference?dataset=country_reference&limit=20', ['json', 'csv', 'arrow']],
  ['/v1/aggregate?metric=ggr&group_by=region&fx=USD', ['json', 'csv', 'arrow']],
  [`/v1/revisions?metric=fx&from=${FIXTURE_RELEASE}&to=${FIXTURE_RELEASE}`, ['json', 'csv', 'arrow']],
  ['/v1/export?metric=fx&fx_local_currency=JPY', ['parquet', 'csv', 'arrow', 'ndjson']],
] as const;
const MEDIA: Record<string, string> = {
  json: 'application/json',
  csv: CSV,
  arrow: ARROW,
  parquet: 'application/vnd.apache.parquet',
  ndjson: 'application/x-ndjson',
};

Named('format= gives the body Accept would, and wins over Accept', async () => {
  for (const [url, formats] of ENDPOINTS) {
    for (const format of formats) {
      const byAccept = await ok(url, MEDIA[format]);
      // Whatever Accept says, even a type the endpoint does not serve.
      for (const accept of [undefined, 'text/html', MEDIA[format === 'csv' ? 'arrow' : 'csv']]) {
        const named = await ok(`${url}&format=${format}`, accept);
        assert.is(named.headers['content-type'], byAccept.headers['content-type'], `${url} ${format} ${accept}`);
        if (format !== 'parquet') assert.ok(named.body.equals(byAccept.body), `${url} ${format} ${accept}: the same bytes`);
      }
    }
  }
});

Named('an unknown or repeated format is a 400 listing the accepted ones, in JSON', async () => {
  for (const [url, formats] of ENDPOINTS) {
    for (const value of ['xml', 'JSON', '', 'csv&format=csv']) {
      const res = await service.get(`${url}&format=${value}`, { headers: { accept: CSV } });
      const expected = value.includes('&')
        ? 'Expected a single value, received several'
        : `Expected ${formats.slice(0, -1).join(', ')} or ${formats.at(-1)}${(formats as readonly string[]).includes('parquet') ? '' : '; Parquet and NDJSON files come from /v1/export (format=parquet)'}`;
      assert.equal(
        [res.status, res.json],
        [400, { error: 'Invalid query parameters', details: { formErrors: [], fieldErrors: { format: [expected] } } }],
        `${url} ${value}`,
      );
    }
  }
  // Not a filter: the metric's dimensions are checked as before, and format is not among them.
  const filter = await service.get('/v1/financials?metric=fx&product=Poker&format=csv');
  assert.match(filter.json.error, /^Invalid filter dimension "product" for metric "fx"\. Valid dimensions: /);
});

Named('the format is part of the cache key and of the cursor: each format its own ETag, and the next page in the same format', async () => {
  const url = '/v1/financials?metric=fx&region=Europe&limit=40';
  const tags = new Map<string, string>();
  for (const format of ['json', 'csv', 'arrow']) {
    const named = await ok(`${url}&format=${format}`);
    tags.set(format, String(named.headers.etag));
    // The same representation as Accept's, so the same tag; a 304 for either.
    assert.is(String((await ok(url, MEDIA[format])).headers.etag), tags.get(format));
    assert.is((await raw(`${url}&format=${format}`, { 'if-none-match': tags.get(format)! })).status, 304);
    const next = format === 'json' ? JSON.parse(named.body.toString()).pagination.cursor : String(named.headers['x-next-cursor']);
    assert.is(named.headers.link, `<${url.replace(/ /g, '%20')}&format=${format}&cursor=${encodeURIComponent(next)}>; rel="next"`);
    const following = await ok(`${url}&format=${format}&cursor=${encodeURIComponent(next)}`);
    assert.is(following.headers['content-type'], named.headers['content-type']);
    for (const other of ['json', 'csv', 'arrow'].filter((f) => f !== format)) {
      assert.is((await raw(`${url}&format=${other}&cursor=${encodeURIComponent(next)}`)).status, 400, `${format} cursor, ${other} page`);
    }
  }
  assert.is(new Set(tags.values()).size, 3);
});

Named.run();
