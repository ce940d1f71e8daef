import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
import { DataQueryClient } from 'data-query-client';
import { request } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadDrop } from '../etl/load.ts';
import { quoteLiteral } from '../src/duckdb/sql-text.ts';
import { DATASETS } from '../src/registry.ts';
import { runQueryCli } from './helpers/query-cli.ts';
import { FIXTURE_RELEASE, fixtureDataDir, startTestService, type TestService, tempDir, walkPages } from './helpers/service.ts';

// GET /v1/export. A release published by `etl load` from a drop written by
// plain DuckDB; every format is read back (DuckDB, apache-arrow) and compared with the
// rows /v1/financials pages for the same filters.

const DIMS = DATASETS.find((d) => d.name === 'ggr')!.dimensions;
const FORMATS = {
  parquet: 'application/vnd.apache.parquet',
  csv: 'text/csv',
  arrow: 'application/vnd.apache.arrow.stream',
  ndjson: 'application/x-ndjson',
} as const;
const state = {
  dataDir: '',
  drop: '',
  work: '',
  service: undefined as TestService | undefined,
  db: undefined as DuckDBInstance | undefined,
  sql: undefined as DuckDBConnection | undefined,
};

async function download(pathAndQuery: string, headers: Record<string, string> = {}) {
  const res = await request(`${state.service!.url}${pathAndQuery}`, { headers: { 'x-api-key': state.service!.key, ...headers } });
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
}

/** Rows as comparable text: dimensions then ggr, year a number. */
const canonical = (row: Record<string, unknown>) =>
  JSON.stringify([...DIMS.map((d) => (d === 'year' ? Number(row[d]) : row[d])), Number(row.ggr)]);

async function readBack(format: keyof typeof FORMATS, body: Buffer): Promise<string[]> {
  if (format === 'arrow')
    return tableFromIPC(body)
      .toArray()
      .map((row: any) => canonical(row.toJSON()));
  const file = path.join(state.work, `export.${format}`);
  await fs.writeFile(file, body);
  const reader =
    format === 'parquet'
      ? `read_parquet(${quoteLiteral(file)})`
      : format === 'csv'
        ? `read_csv(${quoteLiteral(file)}, header = true, types = {'year': 'INTEGER', 'ggr': 'DOUBLE'}, allow_quoted_nulls = false)`
        : `read_json(${quoteLiteral(file)}, format = 'newline_delimited')`;
  return (await state.sql!.runAndReadAll(`SELECT * FROM ${reader}`))
    .getRowObjectsJS()
    .map((row) => canonical(row as Record<string, unknown>));
}

const exports = suite('export');
exports.before(async () => {
  state.dataDir = await tempDir('dqs-exp-test-');
  state.drop = await tempDir('dqs-drop-');
  state.work = await tempDir('dqs-exp-test-work-');
  state.db = await DuckDBInstance.create(':memory:');
  state.sql = await state.db.connect();
  const fixture = path.join(await fixtureDataDir(), FIXTURE_RELEASE);
  // Written by plain DuckDB, in no particular order, with BIGINT years: etl load normalizes it.
  await state.sql.run(
    `COPY (SELECT * REPLACE (year::BIGINT AS year) FROM read_parquet(${quoteLiteral(path.join(fixture, 'ggr.parquet'))}) ORDER BY random()) TO ${quoteLiteral(path.join(state.drop, 'ggr.parquet'))} (FORMAT parquet)`,
  );
  for (const name of ['turnover', 'fx', 'country', 'country_reference'])
    await fs.copyFile(path.join(fixture, `${name}.parquet`), path.join(state.drop, `${name}.parquet`));
  await loadDrop({
    drop: state.drop,
    dataDir: state.dataDir,
    release: '2026-10',
    force: false,
    minYear: 1990,
    maxYear: 2100,
    maxRowChange: 0.25,
  });
  state.service = await startTestService({ dataDir: state.dataDir, env: { EXPORT_LIMIT_PER_DAY: '1000' } });
});
exports.after(async () => {
  await state.service?.stop();
  state.sql?.closeSync();
  state.db?.closeSync();
  for (const dir of [state.dataDir, state.drop, state.work]) await fs.rm(dir, { recursive: true, force: true });
});

exports('every format, whole and filtered, holds exactly the rows /v1/financials pages, in its order', async () => {
  for (const filter of [
    '',
    `&country=${encodeURIComponent("Côte d'Ivoire")}&country=France`,
    '&year=2020&channel=Online',
    '&period=2019-01-01:2021-12-31&fx=USD',
    '&country=Atlantis',
  ]) {
    const expected = (await walkPages(state.service!, `/v1/financials?metric=ggr${filter}`, 1000))
      .flatMap((p) => p.data)
      .map((r: any) => canonical({ ...r.dimensions, ...r.values }));
    for (const [format, accept] of Object.entries(FORMATS) as Array<[keyof typeof FORMATS, string]>) {
      const res = await download(`/v1/export?metric=ggr${filter}`, { accept });
      assert.is(res.status, 200, `${format} ${filter}: ${res.body.toString().slice(0, 200)}`);
      assert.is(res.headers['content-disposition'], `attachment; filename="ggr-2026-10.${format === 'arrow' ? 'arrows' : format}"`);
      if (expected.length === 0 && format !== 'parquet' && format !== 'arrow') {
        assert.is(res.body.toString(), format === 'csv' ? `${DIMS.join(',')},ggr\r\n` : '', `${format} empty`);
        continue;
      }
      assert.equal(await readBack(format, res.body), expected, `${format} ${filter}`);
    }
  }
});

exports('no Accept and */* get Parquet; the types are INTEGER year and DOUBLE metrics', async () => {
  for (const headers of [{}, { accept: '*/*' }] as Record<string, string>[]) {
    const res = await download('/v1/export?metric=ggr&country=France', headers);
    assert.is(String(res.headers['content-type']), 'application/vnd.apache.parquet');
    const file = path.join(state.work, 'types.parquet');
    await fs.writeFile(file, res.body);
    const types = (
      await state.sql!.runAndReadAll(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(${quoteLiteral(file)}))`)
    ).getRows();
    assert.equal(
      types.map(([n, t]) => `${n}:${t}`),
      [...DIMS.map((d) => `${d}:${d === 'year' ? 'INTEGER' : 'VARCHAR'}`), 'ggr:DOUBLE'],
    );
  }
});

exports("the whole dataset is the release's own file: its ETag, 304, ranges and 416", async () => {
  const file = await fs.readFile(path.join(state.dataDir, '2026-10', 'ggr.parquet'));
  const whole = await download('/v1/export?metric=ggr');
  assert.is(whole.status, 200);
  assert.ok(whole.body.equals(file), 'the published bytes');
  assert.is(whole.headers['accept-ranges'], 'bytes');
  const etag = String(whole.headers.etag);
  assert.is((await download('/v1/export?metric=ggr', { 'if-none-match': etag })).status, 304);
  const head = await download('/v1/export?metric=ggr', { range: 'bytes=0-99' });
  assert.equal([head.status, head.headers['content-range'], head.body.length], [206, `bytes 0-99/${file.length}`, 100]);
  assert.ok(head.body.equals(file.subarray(0, 100)));
  const tail = await download('/v1/export?metric=ggr', { range: 'bytes=-10' });
  assert.ok(tail.body.equals(file.subarray(file.length - 10)));
  const rest = await download('/v1/export?metric=ggr', { range: 'bytes=100-', 'if-range': etag });
  assert.ok(Buffer.concat([head.body, rest.body]).equals(file), 'resumed');
  const stale = await download('/v1/export?metric=ggr', { range: 'bytes=100-', 'if-range': '"another"' });
  assert.is(stale.status, 200, 'If-Range naming another ETag gets the whole file');
  const past = await download('/v1/export?metric=ggr', { range: `bytes=${file.length}-` });
  assert.equal(
    [past.status, past.headers['content-range'], JSON.parse(past.body.toString())],
    [416, `bytes */${file.length}`, { error: `Range not satisfiable: the file has ${file.length} bytes` }],
  );
});

exports('406, filter errors and unknown releases, each as /v1/financials words them', async () => {
  const service = state.service!;
  const unacceptable = await service.get('/v1/export?metric=ggr', { headers: { accept: 'application/json' } });
  assert.equal(
    [unacceptable.status, unacceptable.json.error],
    [
      406,
      `Not acceptable: this endpoint serves ${Object.values(FORMATS).join(', ')} (choose one with the Accept header, or with format=${Object.keys(FORMATS).join('|')})`,
    ],
  );
  for (const q of ['metric=fx&product=Lottery', 'metric=revenue', 'period=2020', 'metric=ggr&release=1999-01']) {
    const financial = await service.get(`/v1/financials?${q}`);
    const exported = await service.get(`/v1/export?${q}`);
    assert.equal([exported.status, exported.json], [financial.status, financial.json], q);
  }
});

exports('a client that disconnects mid-stream stops the export: no more queries, and the service serves on', async () => {
  // A release of ~240,000 ggr rows: 15 batches, far more than socket buffers hold.
  const dataDir = await fixtureDataDir({ scale: 0.25 });
  const service = await startTestService({ dataDir });
  try {
    const { db } = service.running.services;
    const socket = net.connect(Number(new URL(service.url).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    // Read slowly: a little, then hang up long before the end.
    socket.write(
      `GET /v1/export?metric=ggr&period=1990-01-01:2100-12-31 HTTP/1.1\r\nHost: x\r\nx-api-key: ${service.key}\r\nAccept: application/x-ndjson\r\n\r\n`,
    );
    socket.pause();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = db.queriesRun;
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const settled = db.queriesRun;
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.is(db.queriesRun, settled, 'no query after the disconnect');
    const rows = (await service.get('/v1/financials?metric=ggr&limit=1')).status;
    assert.is(rows, 200);
    const total = (
      await state.sql!.runAndReadAll(
        `SELECT count(*)::INTEGER FROM read_parquet(${quoteLiteral(path.join(dataDir, FIXTURE_RELEASE, 'ggr.parquet'))})`,
      )
    ).getRows()[0]![0] as number;
    assert.ok(total / 16_384 > 10, `${total} rows`);
    assert.ok(settled - before < 5, `stopped early: ${settled - before} batch queries of ${Math.ceil(total / 16_384)}`);

    // A filtered Parquet export cut off: the generator's clean-up ran (its scratch folder
    // under STATE_DIR/scratch is gone), so it was ended, not left stalled holding its release.
    const scratch = async () => {
      const root = path.join(service.stateDir, 'scratch');
      const names: string[] = [];
      for (const dir of await fs.readdir(root)) names.push(...(await fs.readdir(path.join(root, dir))));
      return names.sort();
    };
    const idle = await scratch();
    const parquet = net.connect(Number(new URL(service.url).port), '127.0.0.1');
    await new Promise((resolve) => parquet.once('connect', resolve));
    parquet.write(`GET /v1/export?metric=ggr&period=1990-01-01:2100-12-31 HTTP/1.1\r\nHost: x\r\nx-api-key: ${service.key}\r\n\r\n`);
    await new Promise((resolve) => parquet.once('data', resolve));
    parquet.pause();
    assert.ok((await scratch()).length > idle.length, 'the export writes its scratch file');
    parquet.destroy();
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(await scratch(), idle, 'and removes it when the client goes');
  } finally {
    await service.stop();
  }
});

exports('the typed client streams an export; the query CLI writes it to stdout with a byte count on stderr', async () => {
  const service = state.service!;
  const api = new DataQueryClient({ baseUrl: service.url, apiKey: service.key });
  const chunks: Buffer[] = [];
  for await (const chunk of await api.export('ggr', { country: 'France' }, { format: 'csv' })) chunks.push(chunk as Buffer);
  assert.ok(Buffer.concat(chunks).equals((await download('/v1/export?metric=ggr&country=France', { accept: 'text/csv' })).body));

  const run = await runQueryCli(['export', 'ggr', '--country', 'France', '--format', 'parquet'], {
    DQS_API_KEY: service.key,
    DQS_URL: service.url,
  });
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stderr, /[\d,.]+ (B|MB) written \| done/);
  const expected = (await walkPages(service, '/v1/financials?metric=ggr&country=France', 1000))
    .flatMap((p) => p.data)
    .map((r: any) => canonical({ ...r.dimensions, ...r.values }));
  assert.equal(await readBack('parquet', run.stdout), expected);
});

exports("README's export examples answer, and DuckDB reads what they download", async () => {
  const text = await fs.readFile(path.resolve(import.meta.dirname, '../README.md'), 'utf8');
  const section = text.slice(text.indexOf('### Bulk export'), text.indexOf('### CSV and Arrow'));
  const lines = [...section.matchAll(/^curl -s -o (\S+) "\$BASE(\/v1\/export[^"]+)"(.*)$/gm)];
  assert.ok(lines.length >= 2, 'README shows the export examples');
  for (const [, file, pathAndQuery, rest] of lines) {
    const accept = /-H "Accept: ([^"]+)"/.exec(rest!)?.[1];
    const res = await download(pathAndQuery!, accept ? { accept } : {});
    assert.is(res.status, 200, pathAndQuery);
    const format = file!.endsWith('.csv') ? 'csv' : 'parquet';
    assert.ok((await readBack(format, res.body)).length > 0, pathAndQuery);
  }
});

exports('EXPORT_LIMIT_PER_DAY exports a key a day, shown in headers; then 429 with Retry-After', async () => {
  const service = await startTestService({ dataDir: state.dataDir, env: { EXPORT_LIMIT_PER_DAY: '2' } });
  try {
    const first = await service.get('/v1/export?metric=ggr&country=France', { headers: { accept: 'text/csv' } });
    assert.equal([first.status, first.headers['x-export-limit'], first.headers['x-export-remaining']], [200, '2', '1']);
    const bad = await service.get('/v1/export?metric=fx&product=Lottery');
    assert.is(bad.status, 400);
    assert.is(bad.headers['x-export-remaining'], undefined, 'a refused request spends nothing');
    assert.is(
      (await service.get('/v1/export?metric=ggr&country=Spain', { headers: { accept: 'text/csv' } })).headers['x-export-remaining'],
      '0',
    );
    const spent = await service.get('/v1/export?metric=ggr&country=Japan', { headers: { accept: 'text/csv' } });
    assert.is(spent.status, 429);
    assert.is(spent.json.error, 'Export limit reached: at most 2 exports per key per UTC day; try again later');
    assert.ok(Number(spent.headers['retry-after']) >= 1);
    assert.is((await service.get('/v1/financials?metric=ggr&limit=1')).status, 200, 'paging is not an export');
  } finally {
    await service.stop();
  }
});

exports.run();
