import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tableFromArrays, tableFromIPC, tableToIPC } from 'apache-arrow';
import { type ClientOptions, DataQueryClient, DataQueryError, DataQueryNetworkError, type RetryEvent } from 'data-query-client';
import * as byPackageName from 'data-query-service/client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService, walkPages } from './helpers/service.ts';

// The client over a real server; failures it must survive are injected by a proxy
// on loopback that the test starts, never by a test-only route in the service.

/** A loopback proxy to `upstream` that answers the first requests with `failures` ('drop' closes the socket). */
async function faultyProxy(upstream: string, failures: Array<number | 'drop'>, options: { passFirst?: number } = {}) {
  const plan = [...failures];
  let passFirst = options.passFirst ?? 0;
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.url!);
    if (passFirst > 0) passFirst--;
    else {
      const failure = plan.shift();
      if (failure === 'drop') return req.socket.destroy();
      if (failure !== undefined) {
        res.writeHead(failure, { 'content-type': 'text/html' }).end('<html>upstream trouble</html>');
        return;
      }
    }
    const forward = http.request(`${upstream}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Records each requested wait instead of waiting, and a fixed jitter of one half. */
function fakeTime(extra: Partial<ClientOptions> = {}) {
  const waits: number[] = [];
  const events: RetryEvent[] = [];
  return {
    waits,
    events,
    options: {
      sleep: async (ms: number) => {
        waits.push(ms);
      },
      random: () => 0.5,
      onRetry: (e: RetryEvent) => events.push(e),
      ...extra,
    },
  };
}

async function collect<T>(rows: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const row of rows) all.push(row);
  return all;
}

let service: TestService;
let expected: any[];
const FILTER = { country: ['France', 'Germany'], year: [2019, 2020, 2021, 2022, 2023, 2024, 2025, 2026, 2027, 2028, 2029, 2030] } as const;
const QUERY = `/v1/financials?metric=ggr&country=France&country=Germany${FILTER.year.map((y) => `&year=${y}`).join('')}`;

const client = suite('client over a real server');
client.before(async () => {
  service = await startTestService();
  expected = (await walkPages(service, QUERY, 1000)).flatMap((page) => page.data);
});
client.after(async () => {
  await service.stop();
});

client('walks every page into rows, typed per metric', async () => {
  const api = new DataQueryClient({ baseUrl: `${service.url}/`, apiKey: service.key });
  const cursors: Array<string | undefined> = [];
  const rows = await collect(api.financials('ggr', FILTER, { limit: 7, onPage: (page) => cursors.push(page.cursor) }));
  assert.ok(expected.length > 14, 'the filter spans at least three pages');
  assert.equal(rows, expected);
  assert.is(cursors.length, Math.ceil(expected.length / 7));
  assert.is(cursors[0], undefined);
  const first = rows[0]!;
  assert.type(first.dimensions.year, 'number');
  assert.type(first.values.ggr, 'number');
  const reference = await collect(api.reference('country_reference', { limit: 10 }));
  assert.ok(reference.length > 10);
  assert.type(reference[0]!.country_type, 'string');
  // Filters are typed per metric: these do not compile (and tsc runs on the tests).
  // @ts-expect-error `product` is not a dimension of fx
  void api.financials('fx', { product: 'Poker' });
  // @ts-expect-error years are integers
  void api.financials('ggr', { year: '2024' });
  // @ts-expect-error not a financial dataset
  void api.financials('country_reference');
  const catalog = await api.catalog();
  assert.equal(
    catalog.map((d) => d.name),
    ['ggr', 'turnover', 'fx', 'country', 'country_reference'],
  );
});

client('aggregate: every group across pages, typed per metric', async () => {
  const api = new DataQueryClient({ baseUrl: service.url, apiKey: service.key });
  const { meta, data } = await api.aggregate(
    'ggr',
    { group_by: ['region', 'year'], fx: 'USD', measure: ['ggr:sum'], rollup: true },
    { limit: 9 },
  );
  const served = (
    await walkPages(service, '/v1/aggregate?metric=ggr&group_by=region,year&fx=USD&measure=ggr:sum&rollup=true', 1000)
  ).flatMap((page) => page.data);
  assert.ok(served.length > 9 * 3, 'spans several pages');
  assert.equal(data, served);
  assert.equal(meta.measures, ['ggr_sum']);
  assert.is(meta.row_count, served.length);
  const csv = [];
  for await (const page of api.aggregatePages('ggr', { group_by: ['region'], fx: 'EUR' }, 'csv', { limit: 2 })) csv.push(page.body);
  assert.ok(csv.length >= 3 && csv.every((text) => text.startsWith('region,ggr_sum,rows\r\n')));
  // Typed per metric: these do not compile (never called: aggregate() sends at once).
  void (() => [
    // @ts-expect-error `product` is not a dimension of fx
    api.aggregate('fx', { group_by: ['product'] }),
    // @ts-expect-error `ggr` is not a metric of turnover
    api.aggregate('turnover', { measure: 'ggr:sum' }),
  ]);
});

client("aggregate with derived measures: the issue's call, typed from the registry", async () => {
  const api = new DataQueryClient({ baseUrl: service.url, apiKey: service.key });
  const { meta, data } = await api.aggregate(
    'ggr',
    { group_by: ['region', 'year'], fx: 'USD', compare: 'previous_year', having: ['ggr_sum.gt.1e9'] },
    { limit: 3 },
  );
  const served = (
    await walkPages(service, '/v1/aggregate?metric=ggr&group_by=region,year&fx=USD&compare=previous_year&having=ggr_sum.gt.1e9', 1000)
  ).flatMap((page) => page.data);
  assert.ok(served.length > 3, 'spans several pages');
  assert.equal(data, served);
  assert.equal(meta.measures, ['ggr_sum', 'ggr_sum_prev', 'ggr_sum_change', 'ggr_sum_pct_change']);
  assert.equal([meta.compare, meta.having], ['previous_year', ['ggr_sum.gt.1e9']]);
  const hold = await api.aggregate('ggr', { group_by: ['product'], fx: 'USD', year: 2024, per: 'turnover', share: 'all' });
  assert.equal(hold.meta.per, { metric: 'turnover', dataset: 'turnover', keys: [...hold.meta.per!.keys] });
  assert.ok(hold.data.every((row) => typeof row.values.ggr_sum_per_turnover === 'number' && typeof row.values.ggr_sum_share === 'number'));
  void (() => [
    // @ts-expect-error turnover divides ggr only
    api.aggregate('country', { per: 'turnover' }),
    // @ts-expect-error `product` is not a dimension of fx to share over
    api.aggregate('fx', { share: 'product' }),
    // @ts-expect-error not an operator
    api.aggregate('ggr', { having: 'ggr_sum.above.1' }),
  ]);
});

client('aggregate as a series: index, cagr, latest and wide, typed', async () => {
  const api = new DataQueryClient({ baseUrl: service.url, apiKey: service.key });
  const growth = await api.aggregate('ggr', { group_by: ['country'], fx: 'USD', cagr: '2015:2024' }, { limit: 50 });
  const served = (await walkPages(service, '/v1/aggregate?metric=ggr&group_by=country&fx=USD&cagr=2015:2024', 1000)).flatMap((p) => p.data);
  assert.equal(growth.data, served);
  assert.equal(growth.meta.cagr, { from: 2015, to: 2024, years: 9 });
  const wide = await api.aggregate('ggr', { group_by: ['region', 'year'], fx: 'USD', index: 2019, latest: 2, shape: 'wide' });
  assert.is(wide.meta.shape, 'wide');
  assert.equal(wide.meta.latest?.n, 2);
  assert.ok(wide.meta.measures.includes(`ggr_sum_index_${wide.meta.years!.at(-1)}`));
  void (() => [
    // @ts-expect-error cagr is <from>:<to>
    api.aggregate('ggr', { cagr: '2015' }),
    // @ts-expect-error long or wide
    api.aggregate('ggr', { shape: 'tall' }),
  ]);
});

client('maxPages stops early; a walk resumes from any page cursor', async () => {
  const api = new DataQueryClient({ baseUrl: service.url, apiKey: service.key });
  let next: string | undefined;
  const head = await collect(
    api.financials('ggr', FILTER, {
      limit: 5,
      maxPages: 2,
      onPage: (page) => {
        next = page.nextCursor;
      },
    }),
  );
  assert.is(head.length, 10);
  const rest = await collect(api.financials('ggr', FILTER, { limit: 5, cursor: next }));
  assert.equal([...head, ...rest], expected);
});

client("errors are typed with the spec's error and details, and are not retried", async () => {
  const time = fakeTime();
  const api = new DataQueryClient({ baseUrl: service.url, apiKey: service.key, ...time.options });
  try {
    await collect(api.financials('ggr', { period: '2024' }));
    assert.unreachable();
  } catch (err) {
    assert.instance(err, DataQueryError);
    const e = err as DataQueryError;
    assert.is(e.status, 400);
    assert.is(e.error, 'Invalid query parameters');
    assert.equal(e.details?.fieldErrors.period, ['Expected format: YYYY-MM-DD:YYYY-MM-DD']);
    assert.match(String(e.requestId), /^[0-9a-f-]{36}$/);
  }
  const wrongKey = new DataQueryClient({ baseUrl: service.url, apiKey: 'sk_live_wrong', ...time.options });
  const err = await wrongKey.catalog().catch((e: unknown) => e);
  assert.instance(err, DataQueryError);
  assert.is((err as DataQueryError).status, 401);
  assert.is((err as DataQueryError).error, 'Invalid or revoked API key');
  assert.is((err as DataQueryError).details, undefined);
  assert.equal(time.waits, []);
});

client('5xx answers and dropped connections are retried with exponential back-off and jitter', async () => {
  const proxy = await faultyProxy(service.url, [503, 'drop', 500]);
  try {
    const time = fakeTime();
    const api = new DataQueryClient({ baseUrl: proxy.url, apiKey: service.key, ...time.options });
    const rows = await collect(api.financials('ggr', FILTER));
    assert.equal(rows, expected);
    // Full jitter at one half: 0.5 × 250 × 2^(attempt - 1).
    assert.equal(time.waits, [125, 250, 500]);
    assert.equal(
      time.events.map((e) => [e.reason, e.attempt, e.status]),
      [
        ['server-error', 1, 503],
        ['network-error', 2, undefined],
        ['server-error', 3, 500],
      ],
    );
    assert.is(proxy.seen.length, 4);
  } finally {
    await proxy.close();
  }
});

client('retries are bounded in count and in time; the last failure is raised', async () => {
  const proxy = await faultyProxy(service.url, Array(20).fill(502));
  try {
    const time = fakeTime();
    const api = new DataQueryClient({ baseUrl: proxy.url, apiKey: service.key, retry: { maxRetries: 2 }, ...time.options });
    const err = await api.catalog().catch((e: unknown) => e);
    assert.instance(err, DataQueryError);
    assert.is((err as DataQueryError).status, 502);
    assert.match((err as DataQueryError).error, /upstream trouble/);
    assert.is(proxy.seen.length, 3);
    assert.equal(time.waits, [125, 250]);

    const bounded = fakeTime({ random: () => 1 });
    const api2 = new DataQueryClient({
      baseUrl: proxy.url,
      apiKey: service.key,
      retry: { maxRetries: 10, maxWaitMs: 1000 },
      ...bounded.options,
    });
    assert.instance(await api2.catalog().catch((e: unknown) => e), DataQueryError);
    assert.equal(bounded.waits, [250, 500], 'a third wait of 1000 ms would pass the 1000 ms budget');
  } finally {
    await proxy.close();
  }
  const nobody = new DataQueryClient({
    baseUrl: 'http://127.0.0.1:1',
    apiKey: service.key,
    retry: { maxRetries: 1 },
    ...fakeTime().options,
  });
  assert.instance(await nobody.catalog().catch((e: unknown) => e), DataQueryNetworkError);
});

client('a walk that fails mid-way carries the cursor to resume from', async () => {
  const proxy = await faultyProxy(service.url, Array(20).fill(503), { passFirst: 2 });
  try {
    const api = new DataQueryClient({ baseUrl: proxy.url, apiKey: service.key, retry: { maxRetries: 1 }, ...fakeTime().options });
    const got: any[] = [];
    let failure: unknown;
    try {
      for await (const row of api.financials('ggr', FILTER, { limit: 6 })) got.push(row);
    } catch (err) {
      failure = err;
    }
    assert.instance(failure, DataQueryError);
    assert.is(got.length, 12);
    const resumeCursor = (failure as DataQueryError).resumeCursor;
    assert.type(resumeCursor, 'string');
    const direct = new DataQueryClient({ baseUrl: service.url, apiKey: service.key });
    got.push(...(await collect(direct.financials('ggr', FILTER, { limit: 6, cursor: resumeCursor }))));
    assert.equal(got, expected);
  } finally {
    await proxy.close();
  }
});

client('consumers import it by the package name, through package.json exports', () => {
  assert.is(byPackageName.DataQueryClient, DataQueryClient);
  assert.is(byPackageName.DataQueryError, DataQueryError);
});

client("csv and arrow walks over the real server give the JSON walk's rows, page by page", async () => {
  const api = new DataQueryClient({ baseUrl: service.url, apiKey: service.key });
  const dims = [
    'year',
    'region',
    'country',
    'state',
    'category',
    'product',
    'channel',
    'sub_channel',
    'fx',
    'temporal',
    'calculation',
  ] as const;
  const flat = expected.map((row) => [...dims.map((d) => String(row.dimensions[d])), String(row.values.ggr)]);

  const csvPages = await collect(api.csv('ggr', FILTER, { limit: 7 }));
  assert.is(csvPages.length, Math.ceil(expected.length / 7));
  const csvRows = csvPages.flatMap((page) => {
    const [header, ...lines] = page.body.trimEnd().split('\r\n');
    assert.is(header, [...dims, 'ggr'].join(','));
    // The filter's values hold no commas or quotes, so a plain split reads these rows.
    return lines.map((line) => line.split(',').map((cell) => cell.replace(/^"(.*)"$/, '$1')));
  });
  assert.equal(
    csvRows.map((r) => [...r.slice(0, -1), String(Number(r.at(-1)))]),
    flat,
  );

  const arrowPages = await collect(api.arrow('ggr', FILTER, { limit: 7 }));
  assert.is(arrowPages.length, csvPages.length);
  const arrowRows = arrowPages.flatMap((page) =>
    tableFromIPC(page.body)
      .toArray()
      .map((row) => [...dims.map((d) => String(row[d])), String(row.ggr)]),
  );
  assert.equal(arrowRows, flat);
});

client.run();

const limited = suite('client and a real 429');

limited('waits out Retry-After of the real limiter and carries on', async () => {
  let now = Date.UTC(2026, 10, 22, 12, 0, 0);
  // The service's limiter runs on a clock the client's sleep moves, so the wait is real to the limiter but costs no time.
  const small = await startTestService({ env: { RATE_LIMIT_PER_MINUTE: '3' }, clock: () => now });
  try {
    const waits: number[] = [];
    const events: RetryEvent[] = [];
    const remaining: Array<number | undefined> = [];
    const api = new DataQueryClient({
      baseUrl: small.url,
      apiKey: small.key,
      sleep: async (ms) => {
        waits.push(ms);
        now += ms;
      },
      onRetry: (e) => events.push(e),
    });
    const rows = await collect(api.financials('ggr', FILTER, { limit: 10, onPage: (page) => remaining.push(page.rateLimit.remaining) }));
    assert.equal(rows, expected);
    const pages = Math.ceil(expected.length / 10);
    assert.ok(pages > 3, 'more pages than the limit allows in a minute');
    // Every fourth request meets a spent minute: its 429 says Retry-After: 60, and the client waits exactly that.
    const refused = Math.ceil(pages / 3) - 1;
    assert.equal(waits, Array(refused).fill(60_000));
    assert.equal(
      events.map((e) => [e.reason, e.status]),
      Array(refused).fill(['rate-limited', 429]),
    );
    assert.equal(remaining.slice(0, 4), [2, 1, 0, 2]);
    const refusals = small.logs.filter((l) => l.msg === 'request' && l.status === 429);
    assert.is(refusals.length, refused);
    assert.ok(refusals.every((l) => l.code === 'rate_limited'));
  } finally {
    await small.stop();
  }
});

limited.run();

const formats = suite('client CSV and Arrow paging (a loopback server mimicking the documented contract)');

/** Serves three pages of `format` on /v1/financials, the cursor in X-Next-Cursor while more pages exist. */
async function mimic(type: string, body: (page: number) => Buffer) {
  const asked: Array<{ accept?: string; key?: string; cursor: string | null; metric: string | null; country: string[] }> = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    asked.push({
      accept: req.headers.accept,
      key: req.headers['x-api-key'] as string,
      cursor: url.searchParams.get('cursor'),
      metric: url.searchParams.get('metric'),
      country: url.searchParams.getAll('country'),
    });
    const page = Number(url.searchParams.get('cursor')?.slice(1) ?? 0);
    const headers: Record<string, string> = { 'content-type': type, 'x-ratelimit-remaining': String(99 - asked.length) };
    if (page < 2) headers['x-next-cursor'] = `c${page + 1}`;
    res.writeHead(200, headers).end(body(page));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked, close: () => new Promise((r) => server.close(r)) };
}

formats('csv pages follow X-Next-Cursor and stop when it is absent', async () => {
  const server = await mimic('text/csv; charset=utf-8', (page) => Buffer.from(`year,country,ggr\r\n${2020 + page},France,${page}.5\r\n`));
  try {
    const api = new DataQueryClient({ baseUrl: server.url, apiKey: 'sk_live_x' });
    const pages = await collect(api.csv('ggr', { country: ['France', 'Spain'] }, { limit: 1 }));
    assert.equal(
      pages.map((p) => p.body),
      [0, 1, 2].map((i) => `year,country,ggr\r\n${2020 + i},France,${i}.5\r\n`),
    );
    assert.equal(
      pages.map((p) => [p.cursor, p.nextCursor, p.rateLimit.remaining]),
      [
        [undefined, 'c1', 98],
        ['c1', 'c2', 97],
        ['c2', undefined, 96],
      ],
    );
    assert.equal(
      server.asked.map((a) => a.cursor),
      [null, 'c1', 'c2'],
    );
    for (const a of server.asked)
      assert.equal([a.accept, a.key, a.metric, a.country], ['text/csv', 'sk_live_x', 'ggr', ['France', 'Spain']]);
  } finally {
    await server.close();
  }
});

formats('arrow pages are IPC streams apache-arrow reads back', async () => {
  const server = await mimic('application/vnd.apache.arrow.stream', (page) =>
    Buffer.from(tableToIPC(tableFromArrays({ year: Int32Array.from([2020 + page]), ggr: Float64Array.from([page + 0.25]) }), 'stream')),
  );
  try {
    const api = new DataQueryClient({ baseUrl: server.url, apiKey: 'sk_live_x' });
    const pages = await collect(api.arrow('ggr', {}));
    assert.is(pages.length, 3);
    const years = pages.map((p) => tableFromIPC(p.body).getChild('year')!.get(0));
    assert.equal(years, [2020, 2021, 2022]);
    assert.is(server.asked[0]!.accept, 'application/vnd.apache.arrow.stream');
  } finally {
    await server.close();
  }
});

formats('a server that answers another format than asked is an error, not bytes misread', async () => {
  const server = await mimic('application/json', () => Buffer.from('{}'));
  try {
    const api = new DataQueryClient({ baseUrl: server.url, apiKey: 'sk_live_x' });
    const err = await collect(api.csv('ggr', {})).catch((e: unknown) => e);
    assert.instance(err, DataQueryError);
    assert.match((err as DataQueryError).error, /Asked for text\/csv but the server answered application\/json/);
  } finally {
    await server.close();
  }
});

formats.run();
