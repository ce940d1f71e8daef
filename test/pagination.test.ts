import fs from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FIXTURE_RELEASE, startTestService, type TestService, tempDir, walkPages } from './helpers/service.ts';

// Keyset pagination: completeness and order for any page size, and cursors that
// only work for the release, dataset and filter set they were issued for.

let service: TestService;
const pages = suite('pagination');
pages.before(async () => {
  service = await startTestService();
});
pages.after(() => service.stop());

const rowsOf = (walk: any[]) => walk.flatMap((page) => page.data);

/** Independent count straight from the Parquet file. */
async function parquetCount(dataset: string, where: string): Promise<number> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const file = path.join(service.dataDir, FIXTURE_RELEASE, `${dataset}.parquet`);
  const reader = await connection.runAndReadAll(`SELECT count(*) FROM read_parquet('${file}') WHERE ${where}`);
  connection.closeSync();
  instance.closeSync();
  return Number(reader.getRows()[0]![0]);
}

pages('every matching row exactly once, in the same order, for page sizes 1, 7 and 1000', async () => {
  const query = '/v1/financials?metric=ggr&region=Oceania&channel=Online';
  const expected = await parquetCount('ggr', "region = 'Oceania' AND channel = 'Online'");
  assert.ok(expected > 100, `fixture too small: ${expected}`);
  const walks = await Promise.all([1, 7, 1000].map((size) => walkPages(service, query, size)));
  const [one, seven, thousand] = walks.map(rowsOf);
  assert.is(one!.length, expected);
  assert.equal(seven, one);
  assert.equal(thousand, one);
  assert.is(new Set(one!.map((row) => JSON.stringify(row.dimensions))).size, expected, 'no row twice');
  assert.is(walks[0]!.length, expected, 'one row per page at limit=1');
  assert.is(walks[2]!.length, Math.ceil(expected / 1000));
});

pages('pages report their size, and the last page has has_more false and an empty cursor', async () => {
  const walk = await walkPages(service, '/v1/financials?metric=fx&region=Europe', 7);
  for (const page of walk.slice(0, -1)) {
    assert.is(page.meta.row_count, 7);
    assert.is(page.pagination.has_more, true);
    assert.match(page.pagination.cursor, /\S/);
  }
  const last = walk.at(-1);
  assert.is(last.meta.row_count, last.data.length);
  assert.is(last.pagination.has_more, false);
  assert.is(last.pagination.cursor, '');
  assert.is(rowsOf(walk).length, await parquetCount('fx', "region = 'Europe'"));
});

pages('a whole unfiltered dataset walks completely (reference and financial)', async () => {
  const reference = rowsOf(await walkPages(service, '/v1/reference?dataset=country_reference', 50));
  assert.is(reference.length, await parquetCount('country_reference', 'true'));
  assert.equal(Object.keys(reference[0]), ['region', 'country', 'country_type']);
  const country = rowsOf(await walkPages(service, '/v1/financials?metric=country', 1000));
  assert.is(country.length, await parquetCount('country', 'true'));
});

pages('the page size may change between pages', async () => {
  const base = '/v1/financials?metric=turnover&country=Canada';
  const all = rowsOf(await walkPages(service, base, 1000));
  const rows: unknown[] = [];
  let cursor = '';
  for (let page = 0; page === 0 || cursor; page++) {
    const res = await service.get(`${base}&limit=${[3, 11, 1][page % 3]}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    rows.push(...res.json.data);
    cursor = res.json.pagination.cursor;
  }
  assert.ok(all.length > 20);
  assert.equal(rows, all);
});

async function firstCursor(query: string): Promise<string> {
  const res = await service.get(`${query}&limit=2`);
  assert.is(res.json.pagination.has_more, true);
  return res.json.pagination.cursor;
}

pages('the order of query parameters and of values does not matter', async () => {
  const cursor = await firstCursor('/v1/financials?metric=ggr&region=Europe&channel=Online&country=France&country=Spain');
  for (const query of [
    '/v1/financials?channel=Online&country=Spain&region=Europe&metric=ggr&country=France',
    '/v1/financials?metric=ggr&country=Spain&country=France&country=Spain&channel=Online&region=Europe',
  ]) {
    const res = await service.get(`${query}&limit=2&cursor=${encodeURIComponent(cursor)}`);
    assert.is(res.status, 200, res.text);
    assert.is(res.json.data.length, 2);
  }
});

pages('a cursor reused with other filters, dataset, period or endpoint is rejected', async () => {
  const cursor = encodeURIComponent(await firstCursor('/v1/financials?metric=ggr&region=Europe'));
  for (const query of [
    '/v1/financials?metric=ggr&region=Africa',
    '/v1/financials?metric=ggr',
    '/v1/financials?metric=ggr&region=Europe&channel=Online',
    '/v1/financials?metric=ggr&region=Europe&region=Africa',
    '/v1/financials?metric=turnover&region=Europe',
    '/v1/financials?metric=ggr&region=Europe&period=2000-01-01:2030-12-31',
    '/v1/financials?metric=ggr&region=Europe&year=2020',
    '/v1/reference?dataset=country_reference',
  ]) {
    const res = await service.get(`${query}&cursor=${cursor}`);
    assert.is(res.status, 400, query);
    assert.equal(res.json, { error: 'Invalid pagination cursor' }, query);
  }
});

pages('a tampered or truncated cursor is rejected', async () => {
  const cursor = await firstCursor('/v1/financials?metric=ggr');
  const [position, mac, tag] = cursor.split('.') as [string, string, string];
  // Forgeries keep the release tag, so they are refused for what they change.
  const withTag = (token: string) => `${token}.${tag}`;
  const flip = (text: string, i: number) => text.slice(0, i) + (text[i] === 'A' ? 'B' : 'A') + text.slice(i + 1);
  const forged = [
    withTag(`${(parseInt(position, 36) + 1).toString(36)}.${mac}`),
    withTag(`0.${mac}`),
    withTag(`${position}.${flip(mac, 0)}`),
    withTag(`${position}.${flip(mac, mac.length - 1)}`),
    // Every other character in the last place: base64 decoding alone would accept some.
    ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
      .split('')
      .filter((c) => c !== mac.at(-1))
      .map((c) => withTag(`${position}.${mac.slice(0, -1)}${c}`)),
    // Another release named: the MAC covers the release too.
    `${position}.${mac}.${(parseInt(tag, 36) + 1).toString(36)}`,
    `${position}.${mac}.`,
    cursor.slice(0, -1),
    cursor.slice(1),
    `${cursor}A`,
    position,
    `.${mac}`,
    Buffer.from(cursor).toString('base64'),
  ];
  for (const token of forged) {
    const res = await service.get(`/v1/financials?metric=ggr&cursor=${encodeURIComponent(token)}`);
    assert.is(res.status, 400, token);
    assert.is(res.json.error, 'Invalid pagination cursor', token);
  }
});

pages('cursors survive a restart, and die with their release', async () => {
  const stateDir = await tempDir();
  const query = '/v1/financials?metric=ggr&region=Europe';
  const first = await startTestService({ dataDir: service.dataDir, stateDir });
  const cursor = encodeURIComponent((await first.get(`${query}&limit=2`)).json.pagination.cursor);
  await first.stop();

  const again = await startTestService({ dataDir: service.dataDir, stateDir });
  assert.is((await again.get(`${query}&cursor=${cursor}`)).status, 200);
  await again.stop();

  // The same files published as the next month's release: same rows, new release id.
  const nextDataDir = await tempDir();
  await fs.cp(path.join(service.dataDir, FIXTURE_RELEASE), path.join(nextDataDir, '2026-12'), { recursive: true });
  const manifestFile = path.join(nextDataDir, '2026-12', 'manifest.json');
  const manifest = JSON.parse(await fs.readFile(manifestFile, 'utf8'));
  await fs.writeFile(manifestFile, JSON.stringify({ ...manifest, release: '2026-12' }));
  const next = await startTestService({ dataDir: nextDataDir, stateDir });
  const res = await next.get(`${query}&cursor=${cursor}`);
  assert.is(res.status, 400);
  assert.is(res.json.error, 'Invalid pagination cursor');
  await next.stop();
  await fs.rm(nextDataDir, { recursive: true });
  await fs.rm(stateDir, { recursive: true });
});

pages('concurrent requests of one SQL shape, with different filters and cursors, each get their own page', async () => {
  // Eight countries, four pages each: 32 requests whose SQL differs only in its parameters, so
  // a statement or parameter shared between connection leases would hand a page to the wrong one.
  const countries = ['France', 'Germany', 'Japan', 'Brazil', 'Spain', 'Italy', 'Mexico', 'India'];
  const requests: Array<{ path: string; expected: unknown }> = [];
  for (const country of countries) {
    const query = `/v1/financials?metric=ggr&country=${encodeURIComponent(country)}`;
    const walk = await walkPages(service, query, 10);
    assert.ok(walk.length >= 4, `${country}: only ${walk.length} pages`);
    walk.slice(0, 4).forEach((page, i) => {
      const cursor = i === 0 ? '' : `&cursor=${encodeURIComponent(walk[i - 1].pagination.cursor)}`;
      requests.push({ path: `${query}&limit=10${cursor}`, expected: page });
    });
  }
  const responses = await Promise.all(requests.map((r) => service.get(r.path)));
  for (const [i, res] of responses.entries()) assert.equal(res.json, requests[i]!.expected, requests[i]!.path);
  // The pages really differ, so a mix-up could not pass unnoticed.
  assert.is(new Set(requests.map((r) => JSON.stringify(r.expected))).size, requests.length);
});

pages.run();
