import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApp } from '../src/app.ts';
import { answerRepeatsBelowKoa } from '../src/http/below-koa.ts';
import { ReplayTable } from '../src/http/middleware/replay-table.ts';
import { startTestService } from './helpers/service.ts';

// The path below Koa (src/http/below-koa.ts) against the app's own pipeline, on a real
// server built from a running service's own services, with a count of the requests
// that reached the app: a repeat it answers gives the app's bytes, headers in the
// app's order, its log line and its counts; everything else reaches the app. (The rest
// of the HTTP suite runs once with this path and once without: `npm test`.)

const service = await startTestService({ env: { RATE_LIMIT_PER_MINUTE: '1000', RATE_LIMIT_PER_DAY: '100000' } });
const { services } = service.running;
const table = new ReplayTable(services.releases, 1 << 20);
const app = createApp(services, {}, table).callback();
let appRequests = 0;
const server = http.createServer(
  answerRepeatsBelowKoa(services, table, (req, res) => {
    appRequests++;
    app(req, res);
  }),
);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const PAGE = '/v1/financials?metric=ggr&region=Europe&limit=5';

/** node:http's client, for the header names in the order sent (undici gives an object). */
function get(
  pathAndQuery: string,
  headers: Record<string, string | string[]> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; names: string[]; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}${pathAndQuery}`, { headers: { 'x-api-key': service.key, 'accept-encoding': 'br', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          headers: res.headers,
          names: res.rawHeaders.filter((_, i) => i % 2 === 0),
          body: Buffer.concat(chunks),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

const count = async (name: string, labels: string) => {
  const text = await services.metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').pop()) : 0;
};

test("a repeat is answered below the app: the app's bytes, headers in its order, its log line and counts", async () => {
  const first = await get(PAGE);
  assert.is(first.status, 200);
  // If-None-Match that matches nothing: the app's own replay answers this one with a 200.
  let before = appRequests;
  const viaApp = await get(PAGE, { 'if-none-match': '"no-such-tag"' });
  assert.is(appRequests - before, 1, 'the app answered the request with If-None-Match');

  const counts = async () => ({
    requests: await count('dqs_http_requests_total', 'listener="public",route="/v1/financials",status="200",code=""'),
    replayed: await count('dqs_replayed_answers_total', 'status="200"'),
    hits: await count('dqs_response_cache_lookups_total', 'result="hit"'),
    timed: await count('dqs_http_request_duration_seconds_count', 'listener="public",route="/v1/financials"'),
  });
  const was = await counts();
  const logged = service.logs.length;
  before = appRequests;
  const below = await get(PAGE, { 'x-request-id': 'trace-42' });
  assert.is(appRequests - before, 0, 'the app did not run');

  assert.is(below.status, 200);
  assert.ok(below.body.equals(first.body) && below.body.equals(viaApp.body), 'the same bytes');
  assert.equal(below.names, viaApp.names, 'the same headers in the same order');
  assert.ok(below.names.length >= 13, `${below.names.length} headers`);
  for (const name of [
    'etag',
    'cache-control',
    'vary',
    'content-type',
    'content-encoding',
    'link',
    'x-ratelimit-limit',
    'ratelimit-policy',
    'content-length',
  ]) {
    assert.is(below.headers[name], viaApp.headers[name], name);
  }
  assert.is(below.headers['x-request-id'], 'trace-42');
  assert.is(
    Number(below.headers['x-ratelimit-remaining']),
    Number(viaApp.headers['x-ratelimit-remaining']) - 1,
    'charged to the key like any request',
  );
  assert.equal(await counts(), { requests: was.requests + 1, replayed: was.replayed + 1, hits: was.hits + 1, timed: was.timed + 1 });

  await new Promise((resolve) => setTimeout(resolve, 300)); // the log writes in blocks, at most 200 ms apart
  const lines = service.logs.slice(logged).filter((l) => l.msg === 'request');
  assert.is(lines.length, 1);
  const appLine = service.logs.find((l) => l.msg === 'request' && l.reqId === viaApp.headers['x-request-id']);
  assert.equal(Object.keys(lines[0]), Object.keys(appLine), 'the same fields in the same order');
  assert.equal({ ...lines[0], time: 0, ms: 0 }, { ...appLine, time: 0, ms: 0, reqId: 'trace-42' });
});

test('the app answers what the path below must not: other methods, no or bad keys, a revoked key, a 304', async () => {
  await get(PAGE);
  const cases: Array<[string, () => Promise<number>, number]> = [
    [
      'HEAD',
      async () =>
        (await request(`${url}${PAGE}`, { method: 'HEAD', headers: { 'x-api-key': service.key, 'accept-encoding': 'br' } })).statusCode,
      200,
    ],
    ['no key', async () => (await get(PAGE, { 'x-api-key': '' })).status, 401],
    ['an unknown key', async () => (await get(PAGE, { 'x-api-key': `sk_live_${'0'.repeat(40)}` })).status, 401],
    ['a 304', async () => (await get(PAGE, { 'if-none-match': (await get(PAGE)).headers.etag as string })).status, 304],
  ];
  for (const [name, send, status] of cases) {
    const before = appRequests;
    assert.is(await send(), status, name);
    assert.ok(appRequests > before, `${name}: the app answered`);
  }

  const created = await service.admin('POST', '/keys', { client: 'revoked-later' });
  const key: string = created.json.key;
  assert.is((await get(PAGE, { 'x-api-key': key })).status, 200);
  assert.is((await get(PAGE, { 'x-api-key': key })).status, 200);
  assert.is((await service.admin('POST', `/keys/${created.json.record.id}/revoke`)).status, 200);
  assert.is((await get(PAGE, { 'x-api-key': key })).status, 401, 'a revoked key is refused at once, recorded answer or not');
});

test('headers are read as node reads them: names in any case below the app, a header given twice left to the app', async () => {
  const first = await get(PAGE);
  let before = appRequests;
  const shouted = await get(PAGE, { 'X-API-KEY': service.key, 'Accept-Encoding': 'br', 'X-REQUEST-ID': 'shouted-7' });
  assert.is(appRequests - before, 0, 'names in capitals: answered below the app');
  assert.is(shouted.status, 200);
  assert.ok(shouted.body.equals(first.body));
  assert.is(shouted.headers['x-request-id'], 'shouted-7');

  const twice: Array<[string, Record<string, string[]>, number]> = [
    ['Accept-Encoding twice', { 'accept-encoding': ['br', 'br'] }, 200],
    ['X-Request-Id twice', { 'x-request-id': ['one', 'two'] }, 200],
    ['x-api-key twice', { 'x-api-key': [service.key, service.key] }, 401],
  ];
  for (const [name, headers, status] of twice) {
    before = appRequests;
    const answer = await get(PAGE, headers);
    assert.is(answer.status, status, name);
    assert.is(appRequests - before, 1, `${name}: the app answered`);
    if (name.startsWith('X-Request-Id'))
      assert.not.match(String(answer.headers['x-request-id']), /one|two/, 'a repeated request id is replaced, as the app replaces it');
  }
});

test("a key over its limit gets the app's 429, and the refusal charges nothing", async () => {
  const limited = await startTestService({ env: { RATE_LIMIT_PER_MINUTE: '3', RATE_LIMIT_PER_DAY: '100' } });
  try {
    const send = () =>
      request(`${limited.url}${PAGE}`, { headers: { 'x-api-key': limited.key } }).then(async (r) => ({
        status: r.statusCode,
        headers: r.headers,
        text: await r.body.text(),
      }));
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await send()).status);
    assert.equal(statuses, [200, 200, 200, 429, 429]);
    const refused = await send();
    assert.is(refused.headers['x-ratelimit-remaining'], '0');
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.ok(JSON.parse(refused.text).error, "the spec's error body");
    const day = /"day";r=(\d+)/.exec(String(refused.headers.ratelimit))![1];
    assert.is(day, '97', 'three requests charged to the day, none of the refused ones');
  } finally {
    await limited.stop();
  }
});

test.after(async () => {
  await new Promise((resolve) => server.close(resolve));
  await service.stop();
});
test.run();
