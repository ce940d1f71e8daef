import { once } from 'node:events';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import Koa from 'koa';
import { request } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Database } from '../src/duckdb/database.ts';
import { InvalidParametersError } from '../src/errors/index.ts';
import { renderError } from '../src/http/middleware/errors.ts';
import { createLogger } from '../src/log.ts';
import { writePointer } from '../src/releases/on-disk.ts';
import { FIXTURE_RELEASE, fixtureDataDir, startTestService, type TestService, tempDir } from './helpers/service.ts';

// Response cache, content-coding and HTTP caching over real HTTP, on real DuckDB.
// Whether DuckDB ran is observed by counting the pool's leases: a cache hit or a
// 304 takes none, and each uncached page takes exactly one.

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Bytes as sent: undici's request() does not decode Content-Encoding. */
async function raw(service: TestService, pathAndQuery: string, headers: Record<string, string> = {}): Promise<Raw> {
  const res = await request(`${service.url}${pathAndQuery}`, { headers: { 'x-api-key': service.key, ...headers } });
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
}

/** Counts the DuckDB queries `db` runs from now on. */
function countQueries(db: Database): () => number {
  let count = 0;
  const use = db.use.bind(db);
  db.use = (work) => {
    count++;
    return use(work);
  };
  return () => count;
}

const decode = (res: Raw): Buffer => {
  const coding = res.headers['content-encoding'];
  if (coding === 'br') return zlib.brotliDecompressSync(res.body);
  if (coding === 'gzip') return zlib.gunzipSync(res.body);
  assert.is(coding, undefined, 'no other coding');
  return res.body;
};

const service = await startTestService();
const queries = countQueries(service.running.services.db);

// ---------------------------------------------------------------------------------

const Same = suite('cache: equal requests, equal bytes');

Same('any parameter and value order, repeated values and year spelling: one body, one ETag, one query', async () => {
  const forms = [
    '/v1/financials?metric=turnover&country=Spain&country=France&year=2021&year=2020&channel=Online&limit=3',
    '/v1/financials?limit=3&channel=Online&year=2020&country=France&year=02021&metric=turnover&country=Spain',
    '/v1/financials?year=2021&country=France&country=Spain&country=France&metric=turnover&limit=3&channel=Online&year=2020',
  ];
  const before = queries();
  const first = await raw(service, forms[0]!);
  assert.is(first.status, 200, first.body.toString());
  assert.is(queries() - before, 1, 'the first request queries DuckDB');
  assert.is(JSON.parse(first.body.toString()).data.length, 3);
  for (const form of [...forms, ...forms]) {
    const res = await raw(service, form);
    assert.is(res.status, 200, form);
    assert.ok(res.body.equals(first.body), `byte-identical: ${form}`);
    assert.is(res.headers.etag, first.headers.etag, form);
  }
  assert.is(queries() - before, 1, 'every later form is a cache hit');
});

Same('the same bytes whether cached or not', async () => {
  const path = '/v1/financials?metric=fx&region=Europe&fx_local_currency=EUR&limit=9';
  const missed = await raw(service, path);
  const hit = await raw(service, path);
  service.running.services.cache.clear();
  const before = queries();
  const again = await raw(service, path);
  assert.is(queries() - before, 1, 'rendered again after clear');
  assert.ok(missed.body.equals(hit.body) && missed.body.equals(again.body));
  assert.is(again.headers.etag, missed.headers.etag);
});

Same('pages, cursors and the reference endpoint are keyed apart', async () => {
  const page1 = await raw(service, '/v1/financials?metric=ggr&country=France&limit=3');
  const cursor = JSON.parse(page1.body.toString()).pagination.cursor;
  const page2 = await raw(service, `/v1/financials?metric=ggr&country=France&limit=3&cursor=${cursor}`);
  const longer = await raw(service, '/v1/financials?metric=ggr&country=France&limit=4');
  const reference = await raw(service, '/v1/reference?limit=3&dataset=country_reference');
  const reordered = await raw(service, '/v1/reference?dataset=country_reference&limit=3');
  const bodies = [page1, page2, longer, reference].map((r) => r.body.toString());
  assert.is(new Set(bodies).size, 4);
  assert.is(new Set([page1, page2, longer, reference].map((r) => r.headers.etag)).size, 4);
  assert.ok(reordered.body.equals(reference.body));
  assert.is(JSON.parse(page2.body.toString()).data[0].dimensions.country, 'France');
});

Same('a bad cursor is refused even for a request whose first page is cached', async () => {
  await raw(service, '/v1/financials?metric=ggr&country=Spain&limit=3');
  const res = await raw(service, '/v1/financials?metric=ggr&country=Spain&limit=3&cursor=0.AAAAAAAAAAAAAAAAAAAAAA');
  assert.is(res.status, 400);
  assert.is(JSON.parse(res.body.toString()).error, 'Invalid pagination cursor');
});

Same.run();

// ---------------------------------------------------------------------------------

const Replay = suite('cache: a repeated request is answered from its record');

/** Headers that differ per request whatever the path: the request id, the limiter's count, the clock. */
const PER_REQUEST = /^(?:x-request-id|date|x-ratelimit-|ratelimit|keep-alive|connection)/;
const representation = (res: Raw) => Object.fromEntries(Object.entries(res.headers).filter(([name]) => !PER_REQUEST.test(name)));

/** Counts the cursors the handlers decode from now on: a replayed request decodes none. */
function countDecodes(): () => number {
  const { cursors } = service.running.services;
  let count = 0;
  const parse = cursors.parse.bind(cursors);
  cursors.parse = (token) => {
    count++;
    return parse(token);
  };
  return () => count;
}

Replay('every format and coding: the same status, headers and bytes as the full path, without reading the request again', async () => {
  // A cursor pages the format it came with: each format's second page, by its own cursor.
  const first = '/v1/financials?metric=ggr&country=France&limit=5';
  const page2 = (cursor: string) => `${first}&cursor=${cursor}`;
  const json = page2(JSON.parse((await raw(service, first)).body.toString()).pagination.cursor);
  const csv = page2(String((await raw(service, first, { accept: 'text/csv' })).headers['x-next-cursor']));
  const arrow = page2(String((await raw(service, `${first}&format=arrow`)).headers['x-next-cursor']));
  const decodes = countDecodes();
  const cases: [string, Record<string, string>][] = [
    [json, {}],
    [json, { 'accept-encoding': 'br' }],
    [json, { 'accept-encoding': 'gzip' }],
    [csv, { accept: 'text/csv' }],
    [arrow, { accept: 'application/vnd.apache.arrow.stream', 'accept-encoding': 'gzip' }],
    [`${arrow}&format=arrow`, {}],
    ['/v1/reference?dataset=country_reference&limit=3', {}],
    ['/v1/catalog', { 'accept-encoding': 'br' }],
    ['/docs', {}],
    ['/openapi.json', { 'accept-encoding': 'gzip' }],
  ];
  for (const [path, headers] of cases) {
    const full = await raw(service, path, headers);
    assert.is(full.status, 200, `${path} ${JSON.stringify(headers)}`);
    const before = { queries: queries(), decodes: decodes() };
    const replayed = await raw(service, path, headers);
    assert.is(queries(), before.queries, 'no query');
    assert.is(decodes(), before.decodes, `the cursor is not decoded again: ${path}`);
    assert.is(replayed.status, 200);
    assert.ok(replayed.body.equals(full.body), `same bytes: ${path} ${JSON.stringify(headers)}`);
    assert.equal(representation(replayed), representation(full), `same headers: ${path} ${JSON.stringify(headers)}`);
    // Counted afresh: the limit headers are not the recorded answer's.
    if (path.startsWith('/v1/'))
      assert.is(
        Number(replayed.headers['x-ratelimit-remaining']),
        Number(full.headers['x-ratelimit-remaining']) - 1,
        `fresh limit headers: ${path}`,
      );
  }
});

Replay('If-None-Match on a replayed request: the same 304 as the full path gives', async () => {
  const path = '/v1/financials?metric=ggr&country=Japan&limit=4';
  const reordered = '/v1/financials?limit=4&country=Japan&metric=ggr';
  const first = await raw(service, path, { 'accept-encoding': 'gzip' });
  const conditional = { 'accept-encoding': 'gzip', 'if-none-match': String(first.headers.etag) };
  const full = await raw(service, reordered, conditional); // never answered yet: the full path
  const replays = async () =>
    Number(
      /^dqs_replayed_answers_total\{status="304"\} (\d+)/m.exec(await fetch(`${service.adminUrl}/metrics`).then((r) => r.text()))?.[1] ?? 0,
    );
  const before = await replays();
  const replayed = await raw(service, path, conditional);
  assert.is(await replays(), before + 1, 'the second 304 came from the replay record');
  for (const res of [full, replayed]) {
    assert.is(res.status, 304);
    assert.is(res.body.length, 0);
  }
  assert.equal(representation(replayed), representation(full));
  const other = await raw(service, path, { 'accept-encoding': 'gzip', 'if-none-match': '"something-else"' });
  assert.is(other.status, 200, 'an ETag that does not match gets the body');
  assert.ok(other.body.equals(first.body));
});

Replay('a body the response cache no longer holds goes down the full path again', async () => {
  const path = '/v1/financials?metric=ggr&country=Spain&limit=7&cursor=';
  const page1 = await raw(service, '/v1/financials?metric=ggr&country=Spain&limit=7');
  const next = `${path}${JSON.parse(page1.body.toString()).pagination.cursor}`;
  const first = await raw(service, next);
  const decodes = countDecodes();
  service.running.services.cache.clear();
  const before = queries();
  const again = await raw(service, next);
  assert.is(queries() - before, 1, 'rendered again');
  assert.is(decodes(), 1, 'the request is read again');
  assert.ok(again.body.equals(first.body));
});

Replay.run();

// ---------------------------------------------------------------------------------

const Coding = suite('cache: br and gzip by Accept-Encoding');
const PAGE = '/v1/financials?metric=ggr&region=Europe&limit=1000';

Coding('br and gzip decode to the identity bytes; each coding has its own ETag; Vary on Accept and Accept-Encoding', async () => {
  const identity = await raw(service, PAGE);
  assert.is(identity.headers['content-encoding'], undefined);
  assert.ok(identity.body.length > 100_000, `a big page: ${identity.body.length} bytes`);
  const etags = new Set([identity.headers.etag]);
  for (const coding of ['br', 'gzip']) {
    for (const round of ['miss', 'hit']) {
      const res = await raw(service, PAGE, { 'accept-encoding': coding });
      assert.is(res.status, 200);
      assert.is(res.headers['content-encoding'], coding, `${coding} ${round}`);
      assert.ok(res.body.length < identity.body.length / 5, `${coding} compresses: ${res.body.length} bytes`);
      assert.ok(decode(res).equals(identity.body), `${coding} ${round} decodes to the identity body`);
      assert.is(Number(res.headers['content-length']), res.body.length);
      etags.add(res.headers.etag);
    }
  }
  assert.is(etags.size, 3, `one ETag per coding: ${[...etags].join(' ')}`);
  for (const etag of etags) assert.match(String(etag), /^"[A-Za-z0-9_-]{22}(-br|-gzip)?"$/);
  assert.is(identity.headers.vary, 'Accept, Accept-Encoding');
});

const NEGOTIATION: Array<[string | undefined, string | undefined]> = [
  [undefined, undefined],
  ['identity', undefined],
  ['gzip', 'gzip'],
  ['br', 'br'],
  ['gzip, deflate, br', 'br'],
  ['gzip;q=1, br;q=0.5', 'gzip'],
  ['br;q=0, gzip;q=0.1', 'gzip'],
  ['br;q=0.2, identity;q=0.5', undefined],
  ['gzip;q=0, br;q=0', undefined],
  ['deflate', undefined],
  ['*', 'br'],
  ['*;q=0.5, br;q=0', 'gzip'],
  ['identity;q=0, *;q=0', undefined],
  ['GZIP', 'gzip'],
];

Coding('q-values are honoured; identity when not asked for anything we have', async () => {
  for (const [accept, expected] of NEGOTIATION) {
    const res = await raw(service, '/v1/catalog', accept === undefined ? {} : { 'accept-encoding': accept });
    assert.is(res.status, 200);
    assert.is(res.headers['content-encoding'], expected, `Accept-Encoding: ${accept}`);
    assert.ok(JSON.parse(decode(res).toString()).datasets.length > 0, `Accept-Encoding: ${accept}`);
  }
});

Coding.run();

// ---------------------------------------------------------------------------------

const Conditional = suite('HTTP caching: ETag, Cache-Control, If-None-Match');

Conditional('200s carry a strong ETag and Cache-Control: private, max-age=86400', async () => {
  for (const path of [PAGE, '/v1/reference?dataset=country_reference', '/v1/catalog']) {
    const res = await raw(service, path);
    assert.is(res.headers['cache-control'], 'private, max-age=86400', path);
    assert.ok(!String(res.headers.etag).startsWith('W/'), `${path}: strong`);
  }
});

Conditional('If-None-Match: the ETag, a list holding it, its weak form or * give a 304 with no body and no query', async () => {
  const path = '/v1/financials?metric=country&calculation=Reported&limit=50';
  for (const coding of ['identity', 'br', 'gzip']) {
    const ok = await raw(service, path, { 'accept-encoding': coding });
    const etag = String(ok.headers.etag);
    service.running.services.cache.clear(); // a 304 must not need the body, cached or not
    const before = queries();
    for (const condition of [etag, `"nope", ${etag}`, `W/${etag}`, `W/"x",W/${etag} , "y"`, '*']) {
      const res = await raw(service, path, { 'accept-encoding': coding, 'if-none-match': condition });
      assert.is(res.status, 304, `${coding}: If-None-Match: ${condition}`);
      assert.is(res.body.length, 0);
      assert.is(res.headers.etag, etag);
      assert.is(res.headers['cache-control'], 'private, max-age=86400');
      assert.is(res.headers.vary, 'Accept, Accept-Encoding');
      assert.is(res.headers['content-encoding'], undefined);
    }
    assert.is(queries() - before, 0, 'no 304 ran a DuckDB query');
    assert.is(service.running.services.cache.bytes, 0, 'and none rendered a body');
  }
});

Conditional('another ETag, another coding’s ETag or another request’s ETag get a 200', async () => {
  const path = '/v1/financials?metric=country&calculation=Estimated&limit=5';
  const br = await raw(service, path, { 'accept-encoding': 'br' });
  const other = await raw(service, `${path}&year=2020`);
  for (const condition of ['"nope"', String(br.headers.etag), String(other.headers.etag), `W/${other.headers.etag}`]) {
    const res = await raw(service, path, { 'if-none-match': condition });
    assert.is(res.status, 200, `If-None-Match: ${condition}`);
    assert.ok(res.body.length > 0);
  }
});

Conditional('the catalog revalidates too', async () => {
  const ok = await raw(service, '/v1/catalog', { 'accept-encoding': 'gzip' });
  const res = await raw(service, '/v1/catalog', { 'accept-encoding': 'gzip', 'if-none-match': String(ok.headers.etag) });
  assert.is(res.status, 304);
});

Conditional('errors carry no caching headers, whatever Accept-Encoding and If-None-Match say', async () => {
  const cases: Array<[string, number, Record<string, string>]> = [
    ['/v1/financials?metric=nope', 400, {}],
    ['/v1/financials?metric=ggr&limit=0', 400, {}],
    ['/v1/financials?metric=ggr&country=France&limit=3&cursor=bad', 400, {}],
    ['/v1/catalog', 401, { 'x-api-key': 'sk_live_nope' }],
    ['/v1/nowhere', 404, {}],
  ];
  for (const [path, status, extra] of cases) {
    const res = await raw(service, path, { 'accept-encoding': 'br, gzip', 'if-none-match': '*', ...extra });
    assert.is(res.status, status, `${path}: ${res.body}`);
    assert.is(res.headers.etag, undefined, path);
    assert.is(res.headers.vary, undefined, path);
    assert.is(res.headers['content-encoding'], undefined, path);
    assert.is(res.headers['cache-control'], 'no-store', path);
    assert.ok(JSON.parse(res.body.toString()).error, path);
  }
});

Conditional.run();

// ---------------------------------------------------------------------------------

const Errors = suite('error renderer');

Errors('clears the caching headers a failed handler set, keeps the rate-limit headers set before it', async () => {
  const app = new Koa();
  const log = createLogger('silent');
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      renderError(ctx, err, log);
    }
  });
  app.use(async (ctx, next) => {
    // What a limiter in front of the handler sets.
    ctx.set({
      'X-RateLimit-Limit': '100',
      'X-RateLimit-Remaining': '7',
      'RateLimit-Policy': '"minute";q=100;w=60',
      RateLimit: '"minute";r=7;t=30',
      'Retry-After': '30',
    });
    await next();
  });
  app.use((ctx) => {
    ctx.set({ ETag: '"abc"', 'Cache-Control': 'private, max-age=86400', 'Content-Encoding': 'br', 'X-Other': '1' });
    ctx.vary('Accept-Encoding');
    throw new InvalidParametersError({ limit: ['bad'] });
  });
  const server = http.createServer(app.callback()).listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const res = await request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const body = await res.body.json();
    assert.is(res.statusCode, 400);
    assert.equal(body, { error: 'Invalid query parameters', details: { formErrors: [], fieldErrors: { limit: ['bad'] } } });
    for (const gone of ['etag', 'vary', 'content-encoding', 'x-other']) assert.is(res.headers[gone], undefined, gone);
    assert.is(res.headers['cache-control'], 'no-store');
    assert.is(res.headers['x-ratelimit-limit'], '100');
    assert.is(res.headers['x-ratelimit-remaining'], '7');
    assert.is(res.headers['ratelimit-policy'], '"minute";q=100;w=60');
    assert.is(res.headers.ratelimit, '"minute";r=7;t=30');
    assert.is(res.headers['retry-after'], '30');
  } finally {
    server.close();
  }
});

Errors.run();

// ---------------------------------------------------------------------------------

const Release = suite('cache: a new release empties it');

Release('bodies and ETags of the old release are gone once another release is served', async () => {
  // Two releases side by side in a DATA_DIR of this test's own; the pointer names the first.
  const dataDir = await tempDir('dqs-cache-data-');
  for (const release of [FIXTURE_RELEASE, '2026-12']) {
    await fs.cp(path.join(await fixtureDataDir({ release }), release), path.join(dataDir, release), { recursive: true });
  }
  await writePointer(dataDir, FIXTURE_RELEASE);
  const switching = await startTestService({ dataDir });
  try {
    const { cache, db } = switching.running.services;
    const queriesRun = countQueries(db);
    const page = '/v1/financials?metric=ggr&channel=Land&limit=20';
    const old = await raw(switching, page);
    assert.ok(cache.bytes > 0);
    await writePointer(dataDir, '2026-12');
    await switching.running.reload('test');
    assert.is(cache.bytes, 0, 'emptied on the change');
    const before = queriesRun();
    const fresh = await raw(switching, page);
    assert.is(queriesRun() - before, 1, 'rendered again');
    assert.is.not(fresh.headers.etag, old.headers.etag, 'the ETag names the release');
    const stale = await raw(switching, page, { 'if-none-match': String(old.headers.etag) });
    assert.is(stale.status, 200, 'an old-release ETag no longer validates');
  } finally {
    await switching.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

Release.after(() => service.stop());
Release.run();

// ---------------------------------------------------------------------------------

const Bound = suite('cache: bounded in bytes');
let small: TestService;
Bound.before(async () => {
  small = await startTestService({ env: { CACHE_MAX_BYTES: '60000' } });
});
Bound.after(() => small.stop());

Bound('the least recently used pages are evicted; the cache never holds more than its bound', async () => {
  const count = countQueries(small.running.services.db);
  const pages = ['France', 'Spain', 'Germany', 'Italy', 'Japan'].map((country) => `/v1/financials?metric=ggr&country=${country}&limit=60`);
  const sizes: number[] = [];
  for (const page of pages) {
    const res = await raw(small, page);
    assert.is(res.status, 200);
    sizes.push(res.body.length);
    assert.ok(small.running.services.cache.bytes <= 60_000, `${small.running.services.cache.bytes} bytes held`);
  }
  assert.ok(sizes.reduce((a, b) => a + b) > 60_000, `the pages (${sizes.join(', ')} bytes) overflow the bound`);
  assert.is(count(), 5);
  await raw(small, pages[4]!);
  assert.is(count(), 5, 'the latest page is still cached');
  await raw(small, pages[0]!);
  assert.is(count(), 6, 'the oldest page was evicted and is rendered again');
});

Bound('a body larger than the whole cache is served, not kept', async () => {
  const res = await raw(small, '/v1/financials?metric=ggr&limit=1000');
  assert.is(res.status, 200);
  assert.ok(res.body.length > 60_000);
  assert.ok(small.running.services.cache.bytes <= 60_000);
});

Bound.run();
