import net from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { QUERY_LIMITS } from '../src/http/middleware/query-guard.ts';
import { send, startTestService, type TestService } from './helpers/service.ts';

// The request edge: oversized query strings, parser-level errors and slow clients
// are refused cheaply, as JSON, with a log line, and never reach DuckDB.

const edge = suite<{ service: TestService }>('request edge');

edge.before(async (ctx) => {
  ctx.service = await startTestService({
    // One turn of heavy work, so a test can hold it and keep a request's work waiting.
    env: { HTTP_HEADERS_TIMEOUT_MS: '400', HTTP_REQUEST_TIMEOUT_MS: '800', HTTP_KEEP_ALIVE_TIMEOUT_MS: '200', ADMISSION_CONCURRENCY: '1' },
  });
});
edge.after(async ({ service }) => service.stop());

const queries = (service: TestService) => service.running.services.db.queriesRun;

/** `count` filter parameters on a valid ggr query, padded so the query string is exactly `bytes` long when given. */
function query(count: number, bytes?: number): string {
  const parts = ['metric=ggr', ...Array.from({ length: count - 1 }, () => 'country=France')];
  let qs = parts.join('&');
  if (bytes !== undefined) qs += `&state=${'x'.repeat(bytes - qs.length - '&state='.length)}`;
  return qs;
}

/**
 * Raw bytes over a socket; resolves with what the server sent once it closes the
 * connection. What `after` resolves to is written after `data`.
 */
function raw(
  service: TestService,
  data: string,
  keepOpen = false,
  options: { url?: string; after?: () => Promise<string> } = {},
): Promise<{ text: string; ms: number }> {
  const { hostname, port } = new URL(options.url ?? service.url);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = net.connect(Number(port), hostname, () => {
      if (data) socket.write(data);
      if (!keepOpen && !data) socket.end();
      options.after?.().then((more) => socket.write(more), reject);
    });
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve({ text, ms: performance.now() - started }));
    // Bounds the test if the server never closes: the assertion below then fails.
    setTimeout(() => socket.destroy(), 10_000).unref();
  });
}

const bodyOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));

/** The header lines of a raw answer, by lower-case name. */
const headersOf = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .slice(0, text.indexOf('\r\n\r\n'))
      .split('\r\n')
      .slice(1)
      .map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );

/** Resolves once `condition` holds, checked every 10 ms; throws after `withinMs` (a bound on a hang, not a timing). */
async function until(condition: () => boolean | Promise<boolean>, what: string, withinMs = 30_000): Promise<void> {
  for (const started = Date.now(); !(await condition()); await new Promise((resolve) => setTimeout(resolve, 10))) {
    if (Date.now() - started > withinMs) throw new Error(`not within ${withinMs} ms: ${what}`);
  }
}

/** A counter's value on the admin listener's /metrics, 0 while it has none. */
async function metric(service: TestService, line: RegExp): Promise<number> {
  return Number(line.exec((await send(`${service.adminUrl}/metrics`)).text)?.[1] ?? 0);
}

edge('a query string at the byte limit passes; one byte more is 414 and runs no query', async ({ service }) => {
  const atLimit = await service.get(`/v1/financials?${query(3, QUERY_LIMITS.maxBytes)}`);
  assert.is(atLimit.status, 200, atLimit.text);
  const before = queries(service);
  const over = await service.get(`/v1/financials?${query(3, QUERY_LIMITS.maxBytes + 1)}`);
  assert.is(over.status, 414);
  assert.equal(over.json, { error: 'Query string too long: at most 4096 bytes' });
  assert.is(queries(service), before);
});

edge('200 parameters pass; 201 are a 400 in the spec shape and run no query', async ({ service }) => {
  const ok = await service.get(`/v1/financials?${query(200)}`);
  assert.is(ok.status, 200, ok.text);
  const before = queries(service);
  const over = await service.get(`/v1/financials?${query(201)}`);
  assert.is(over.status, 400);
  assert.equal(over.json, {
    error: 'Invalid query parameters',
    details: { formErrors: ['Too many query parameters: at most 200'], fieldErrors: {} },
  });
  assert.is(queries(service), before);
});

edge('the guard also covers paths that need no key and unknown paths', async ({ service }) => {
  const long = `a=${'x'.repeat(QUERY_LIMITS.maxBytes)}`;
  assert.is((await service.get(`/healthz?${long}`, { key: null })).status, 414);
  assert.is((await service.get(`/nowhere?${long}`, { key: null })).status, 414);
});

edge('years the release does not hold never reach DuckDB, as unknown text values do not', async ({ service }) => {
  const before = queries(service);
  for (const year of ['1850', '999999999', '-5']) {
    const res = await service.get(`/v1/financials?metric=ggr&year=${year}`);
    assert.is(res.status, 200, res.text);
    assert.equal([res.json.data, res.json.pagination.has_more], [[], false]);
  }
  assert.is(queries(service), before);
  // A held year next to unknown ones still queries, for the held year alone.
  const mixed = await service.get('/v1/financials?metric=ggr&year=1850&year=2020&limit=3');
  assert.ok(mixed.json.data.length > 0 && mixed.json.data.every((row: any) => row.dimensions.year === 2020));
  assert.is(queries(service), before + 1);
});

edge('oversized headers get a JSON 431 and a log line', async ({ service }) => {
  const { text } = await raw(service, `GET /v1/catalog HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  assert.match(text, /^HTTP\/1\.1 431 /);
  assert.match(text, /Content-Type: application\/json/);
  assert.equal(bodyOf(text), { error: 'Request headers too large' });
  assert.ok(service.logs.some((l) => l.msg === 'client error' && l.code === 'HPE_HEADER_OVERFLOW' && l.status === 431));
});

edge('a malformed request gets a JSON 400', async ({ service }) => {
  const { text } = await raw(service, 'HELLO THERE\r\n\r\n');
  assert.match(text, /^HTTP\/1\.1 400 /);
  assert.equal(bodyOf(text), { error: 'Malformed HTTP request' });
});

edge('a malformed chunked body after valid headers gets a JSON 400 too, keyed or not', async ({ service }) => {
  for (const head of ['GET /healthz HTTP/1.1', `GET /v1/financials?metric=ggr&limit=1 HTTP/1.1\r\nx-api-key: ${service.key}`]) {
    const before = queries(service);
    const { text } = await raw(service, `${head}\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nnot a chunk\r\n\r\n`);
    assert.match(text, /^HTTP\/1\.1 400 /, head);
    assert.match(text, /Content-Type: application\/json/);
    assert.equal(bodyOf(text), { error: 'Malformed HTTP request' });
    assert.ok(queries(service) - before <= 1, 'at most the page its handler had started');
  }
  assert.ok(service.logs.some((l) => l.msg === 'client error' && l.status === 400 && l.code === 'HPE_INVALID_CHUNK_SIZE'));
});

edge(
  "a body gone bad after its handler started: the JSON 400 has none of the handler's headers, and its heavy work stops",
  async ({ service }) => {
    const { admission } = service.running.services;
    const cancelled = () => metric(service, /^dqs_heavy_cancellations_total\{kind="aggregate",reason="client_gone"\} (\d+)/m);
    const before = await cancelled();
    // The one turn is held, so the aggregate's handler has set its ETag and caching and waits for its turn when the chunk goes bad.
    let letGo!: () => void;
    const holder = admission.run('holder', 'aggregate', () => new Promise<void>((resolve) => (letGo = resolve)));
    try {
      const { text } = await raw(
        service,
        `GET /v1/aggregate?metric=ggr&fx=USD&group_by=country,year HTTP/1.1\r\nHost: x\r\nx-api-key: ${service.key}\r\nTransfer-Encoding: chunked\r\n\r\n`,
        true,
        {
          after: async () => {
            await until(() => admission.queued === 1, 'the aggregate queued');
            return 'ZZZ\r\nnot a chunk\r\n\r\n';
          },
        },
      );
      assert.match(text, /^HTTP\/1\.1 400 /);
      assert.equal(bodyOf(text), { error: 'Malformed HTTP request' });
      const headers = headersOf(text);
      assert.is(headers.etag, undefined, 'the ETag of an answer never sent');
      assert.is(headers.vary, undefined);
      assert.is(headers['cache-control'], 'no-store');
      assert.is(headers['content-type'], 'application/json; charset=utf-8');
      assert.is(headers['x-content-type-options'], 'nosniff');
      assert.is(headers['content-security-policy'], "frame-ancestors 'none'");
      // The work waiting for its turn is dropped while the turn is still held: it will never run.
      await until(async () => admission.queued === 0 && (await cancelled()) === before + 1, 'the aggregate cancelled');
      // One request, one id: the refusal's, the request's log line's and the client error's.
      const reqId = headers['x-request-id'];
      await until(() => service.logs.some((l) => l.msg === 'request' && l.reqId === reqId), 'the request logged');
      const line = service.logs.find((l) => l.msg === 'request' && l.reqId === reqId);
      assert.equal([line.status, line.code], [400, 'malformed_request']);
      assert.ok(service.logs.some((l) => l.msg === 'client error' && l.reqId === reqId && l.code === 'HPE_INVALID_CHUNK_SIZE'));
    } finally {
      letGo();
      await holder;
    }
  },
);

edge('CONNECT, on either listener, and a request without Host get a JSON refusal and a log line, not silence', async ({ service }) => {
  for (const url of [service.url, service.adminUrl]) {
    for (const [request, status, body, allow] of [
      ['CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 405, { error: 'Method not allowed' }, ''],
      ['CONNECT /healthz HTTP/1.0\r\n\r\n', 405, { error: 'Method not allowed' }, ''],
      ['GET /healthz HTTP/1.1\r\n\r\n', 400, { error: 'Malformed HTTP request' }, undefined],
    ] as const) {
      const { text } = await raw(service, request, true, { url });
      assert.match(text, new RegExp(`^HTTP/1\\.1 ${status} `), `${url} ${request}`);
      assert.equal(bodyOf(text), body);
      const headers = headersOf(text);
      // An origin server, not a proxy: the authority a CONNECT names allows no method here.
      assert.is(headers.allow, allow);
      assert.is(headers['x-content-type-options'], 'nosniff');
      assert.is(headers['cache-control'], 'no-store');
      assert.ok(service.logs.some((l) => l.msg.startsWith('client error') && l.reqId === headers['x-request-id'] && l.status === status));
    }
  }
  // Any other method the parser takes reaches the app: on a known path, the JSON 405 with what it allows.
  const { text } = await raw(service, 'QUERY /healthz HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi');
  assert.match(text, /^HTTP\/1\.1 405 /);
  assert.equal(bodyOf(text), { error: 'Method not allowed' });
  assert.is(headersOf(text).allow, 'HEAD, GET');
});

edge('a silent connection is answered 408 and closed on the headers timeout', async ({ service }) => {
  const { text, ms } = await raw(service, '', true);
  assert.match(text, /^HTTP\/1\.1 408 /);
  assert.equal(bodyOf(text), { error: 'Request timed out: the request was not received in time' });
  assert.ok(ms < 5000, `closed after ${ms} ms`);
});

edge('headers sent slowly are cut off at the headers timeout', async ({ service }) => {
  const { text, ms } = await raw(service, 'GET /v1/catalog HTTP/1.1\r\nHost: x\r\n', true);
  assert.match(text, /^HTTP\/1\.1 408 /);
  assert.ok(ms < 5000, `closed after ${ms} ms`);
});

edge('a body that never finishes arriving is cut off at the request timeout', async ({ service }) => {
  const { ms } = await raw(service, 'POST /v1/catalog HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc', true);
  assert.ok(ms < 5000, `closed after ${ms} ms`);
});

edge('an idle keep-alive connection is closed after the keep-alive timeout', async ({ service }) => {
  const { text, ms } = await raw(service, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', true);
  assert.match(text, /^HTTP\/1\.1 200 /);
  assert.ok(ms < 5000, `closed after ${ms} ms`);
});

edge('a key pasted into the URL never reaches the request log', async ({ service }) => {
  const key = service.key;
  const encoded = key.replace(/_/g, '%5F');
  await service.get(`/v1/catalog?api_key=${key}`);
  await service.get(`/v1/catalog?x=${encoded}`);
  await service.get(`/v1/${key}`);
  const logged = JSON.stringify(service.logs);
  assert.not.ok(logged.includes(key.slice(8)), 'the secret part of the key was logged');
  assert.ok(service.logs.some((l) => l.msg === 'request' && l.url === '/v1/catalog?api_key=sk_live_[redacted]'));
});

edge('every answer, success or error, keyed or not, forbids sniffing and framing', async ({ service }) => {
  for (const [path, key] of [
    ['/v1/financials?metric=ggr&limit=1', undefined],
    ['/v1/financials?metric=nope', undefined],
    ['/v1/financials?metric=ggr', null],
    ['/healthz', null],
    ['/nowhere', null],
  ] as const) {
    const res = await service.get(path, { key });
    assert.is(res.headers['x-content-type-options'], 'nosniff', path);
    assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/, path);
  }
});

edge('a key in any spelling, in the URL or as X-Request-Id, is neither logged nor echoed', async ({ service }) => {
  const key = service.key;
  const secret = key.slice(8);
  const percent = [...key].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
  // Encoded once more each time: `%` is `%25`, so the fourth is %25252573 for `s`.
  const encodings = [percent];
  while (encodings.length < 4) encodings.push(encodings.at(-1)!.replace(/%/g, '%25'));
  const spellings = [
    ...encodings,
    key.replace(/_/g, '+'),
    secret,
    // The secret run into other letters and digits, on either side.
    `0${secret}`,
    `${secret}Z`,
    `x${key}9`,
    // A malformed escape beside an encoded key, which decodeURIComponent gives up on.
    `%zz${percent}`,
    `%${encodings[1]}`,
    encodeURIComponent(` ${key} `),
  ];
  for (const spelling of spellings) {
    await service.get(`/v1/financials?metric=ggr&limit=1&q=${spelling}`);
    await service.get(`/v1/${spelling}/x`);
  }
  for (const id of [key, secret, `0${secret}`, `${secret}.0`]) {
    const res = await service.get('/v1/financials?metric=ggr&limit=1', { headers: { 'x-request-id': id } });
    assert.is.not(res.headers['x-request-id'], id, 'a key sent as X-Request-Id is replaced, not echoed');
  }
  const logged = JSON.stringify(service.logs);
  assert.not.ok(logged.includes(secret), 'the secret was logged');
  for (const [i, encoded] of encodings.entries()) {
    // A character is 3 + 2i characters of the i-th encoding, and the secret starts at the key's ninth: its first ten, encoded.
    const width = 3 + 2 * i;
    assert.not.ok(logged.includes(encoded.slice(8 * width, 18 * width)), `the secret encoded ${i + 1} times was logged`);
  }
  assert.ok(service.logs.some((l) => l.msg === 'request' && l.url === '/v1/financials?metric=ggr&limit=1&q=[redacted]'));
  // A request id of the accepted form that is not a key is kept.
  const own = await service.get('/v1/financials?metric=ggr&limit=1', { headers: { 'x-request-id': 'trace-0af7651916cd43dd' } });
  assert.is(own.headers['x-request-id'], 'trace-0af7651916cd43dd');
});

edge.run();

// TRUST_PROXY: the client address is the last X-Forwarded-For hop (the one our balancer
// appends), so the bad-key guard counts real clients, and a client cannot dodge it by
// writing addresses of its own before that hop.
const proxy = suite('client address behind a balancer');

async function badKeyStatuses(service: TestService, forwardedFor: (i: number) => string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    statuses.push((await service.get('/v1/catalog', { key: 'sk_live_wrong', headers: { 'x-forwarded-for': forwardedFor(i) } })).status);
  }
  return statuses;
}

proxy('with TRUST_PROXY the last hop is the client; earlier hops are ignored', async () => {
  const service = await startTestService({ env: { TRUST_PROXY: 'true', BAD_KEY_LIMIT_PER_MINUTE: '3' } });
  try {
    // Spoofed first hops, one real client (the last hop): refused after 3.
    assert.equal(await badKeyStatuses(service, (i) => `203.0.113.${i}, 198.51.100.7`, 4), [401, 401, 401, 429]);
    // Another client behind the same balancer is not held back by the first one.
    assert.equal(await badKeyStatuses(service, () => '198.51.100.8', 1), [401]);
  } finally {
    await service.stop();
  }
});

proxy('without TRUST_PROXY X-Forwarded-For is ignored', async () => {
  const service = await startTestService({ env: { BAD_KEY_LIMIT_PER_MINUTE: '3' } });
  try {
    assert.equal(await badKeyStatuses(service, (i) => `198.51.100.${i}`, 4), [401, 401, 401, 429]);
  } finally {
    await service.stop();
  }
});

proxy.run();
