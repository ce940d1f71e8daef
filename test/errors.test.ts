import { once } from 'node:events';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { OpenExports } from '../src/admission/open-exports.ts';
import { Admission } from '../src/admission/queue.ts';
import { createApp } from '../src/app.ts';
import { NoopResponseCache } from '../src/cache/noop.ts';
import { Database } from '../src/duckdb/database.ts';
import { FileInviteStore } from '../src/invites/file-store.ts';
import { FileKeyStore } from '../src/keys/file-store.ts';
import { MemoryLimiter } from '../src/limits/memory.ts';
import { MemoryBudget } from '../src/limits/memory-budget.ts';
import { createLogger } from '../src/log.ts';
import { Metrics } from '../src/metrics.ts';
import { ReleaseEvents } from '../src/notify/release-event.ts';
import type { AggregateResult } from '../src/query/aggregate.ts';
import { CursorCodec } from '../src/query/cursor.ts';
import type { HistoryTable } from '../src/query/history.ts';
import { KeptResults } from '../src/query/kept-results.ts';
import type { RevisionDiff } from '../src/query/revisions.ts';
import { DATASETS } from '../src/registry.ts';
import { Releases } from '../src/releases/releases.ts';
import type { Services } from '../src/services.ts';
import { MemoryUsageStore } from '../src/usage/memory-store.ts';
import { UsageLog } from '../src/usage/usage-log.ts';
import { type Response, send, startTestService, type TestService, tempDir } from './helpers/service.ts';

// Every error scenario of spec section 7.2 (rate limiting aside), plus the body
// shapes the spec leaves open: 404, 405 and 500.

let service: TestService;
const errors = suite('errors');
errors.before(async () => {
  service = await startTestService();
});
errors.after(() => service.stop());

function assertError(res: Response, status: number, error: string | RegExp) {
  assert.is(res.status, status, res.text);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  if (typeof error === 'string') assert.is(res.json.error, error);
  else assert.match(res.json.error, error);
}

const invalidParams = (res: Response, field: string) => {
  assertError(res, 400, 'Invalid query parameters');
  assert.equal(res.json.details.formErrors, []);
  assert.ok(Array.isArray(res.json.details.fieldErrors[field]), `fieldErrors.${field} in ${res.text}`);
  return res.json.details.fieldErrors[field] as string[];
};

errors('missing metric: fieldErrors.metric says a string was expected and none received, then what to send', async () => {
  for (const path of ['/v1/financials', '/v1/aggregate', '/v1/revisions', '/v1/export']) {
    const messages = invalidParams(await service.get(path), 'metric');
    assert.equal(
      messages,
      ['Invalid type: Expected string but received undefined: metric is required, one of ggr, turnover, fx, country'],
      path,
    );
  }
  assert.equal(invalidParams(await service.get('/v1/financials?metric='), 'metric'), [
    'Invalid length: Expected >=1 but received 0: metric is required, one of ggr, turnover, fx, country',
  ]);
  assert.equal(invalidParams(await service.get('/v1/reference'), 'dataset'), [
    'Invalid type: Expected string but received undefined: dataset is required, one of country_reference',
  ]);
});

errors('malformed period: fieldErrors.period has the expected format', async () => {
  for (const period of ['2020-01-01', '2020-1-01:2020-12-31', '20200101:20201231', '2020-01-01:2020-12-31x', '']) {
    const messages = invalidParams(await service.get(`/v1/financials?metric=ggr&period=${encodeURIComponent(period)}`), 'period');
    assert.equal(messages, ['Expected format: YYYY-MM-DD:YYYY-MM-DD'], period);
  }
});

errors('missing metric and bad period are reported together', async () => {
  const res = await service.get('/v1/financials?period=2020');
  invalidParams(res, 'metric');
  invalidParams(res, 'period');
});

errors('unknown metric names it in single quotes and points to the catalog, then says what was meant', async () => {
  const catalog = (metric: string) => `Unknown metric: '${metric}'. Use GET /v1/catalog to list the available metrics.`;
  const cases = [
    ['nope', '/v1/financials', catalog('nope')],
    ['GGR', '/v1/financials', `${catalog('GGR')} Did you mean "ggr"?`],
    ['turnovr', '/v1/export', `${catalog('turnovr')} Did you mean "turnover"?`],
    [
      'country_reference',
      '/v1/financials',
      `${catalog('country_reference')} country_reference is a reference dataset: use GET /v1/reference?dataset=country_reference`,
    ],
    ['inflation', '/v1/financials', `${catalog('inflation')} inflation is a metric of the dataset country: use metric=country`],
    ['fx_current_usd', '/v1/revisions', `${catalog('fx_current_usd')} fx_current_usd is a metric of the dataset fx: use metric=fx`],
    [
      'inflation',
      '/v1/aggregate',
      `${catalog('inflation')} inflation is a metric of the dataset country: use metric=country&measure=inflation`,
    ],
  ];
  for (const [metric, path, error] of cases) {
    const res = await service.get(`${path}?metric=${metric}`);
    assertError(res, 400, error!);
    assert.is(res.json.details, undefined);
  }
});

errors('a parameter that is not a dimension of the metric lists the valid ones', async () => {
  // The lists are spec section 2.2's, written out: derived from the registry, they could not catch it.
  const market = 'year, region, country, state, category, product, channel, sub_channel, fx, temporal, calculation';
  const cases = [
    ['ggr', 'fx_local_currency', market],
    ['fx', 'product', 'year, region, country, state, fx_local_currency, temporal, calculation'],
    ['country', 'channel', 'year, region, country, state, temporal, calculation'],
    ['turnover', 'bogus', market],
  ];
  for (const [metric, param, valid] of cases) {
    const res = await service.get(`/v1/financials?metric=${metric}&${param}=x`);
    assertError(res, 400, `Invalid filter dimension "${param}" for metric "${metric}". Valid dimensions: ${valid}`);
  }
});

errors('bad cursor', async () => {
  for (const cursor of ['nonsense', '', 'a.b', '0.AAAAAAAAAAAAAAAAAAAAAA']) {
    const res = await service.get(`/v1/financials?metric=ggr&cursor=${encodeURIComponent(cursor)}`);
    assertError(res, 400, 'Invalid pagination cursor');
    assert.is(res.json.details, undefined);
  }
});

// The one auth contract, run against every route.
for (const route of ['/v1/financials?metric=ggr', '/v1/reference?dataset=country_reference', '/v1/catalog']) {
  errors(`${route}: missing key → 401 Missing x-api-key header`, async () => {
    assertError(await service.get(route, { key: null }), 401, 'Missing x-api-key header');
    assertError(await service.get(route, { key: '' }), 401, 'Missing x-api-key header');
  });
  errors(`${route}: invalid or revoked key → 401 Invalid or revoked API key`, async () => {
    assertError(await service.get(route, { key: 'sk_live_notarealkeynotarealkeynotarealkey00' }), 401, 'Invalid or revoked API key');
    assertError(await service.get(route, { key: service.key.slice(0, -1) }), 401, 'Invalid or revoked API key');
    const { json } = await service.admin('POST', '/keys', { client: 'soon revoked' });
    assert.is((await service.get(route, { key: json.key })).status, 200);
    await service.admin('POST', `/keys/${json.record.id}/revoke`);
    assertError(await service.get(route, { key: json.key }), 401, 'Invalid or revoked API key');
  });
}

errors('a parameter given twice where one is expected is a 400 naming it', async () => {
  const cases: Array<[string, string]> = [
    ['/v1/financials?metric=ggr&metric=fx', 'metric'],
    ['/v1/financials?metric=ggr&period=2020-01-01:2020-12-31&period=2021-01-01:2021-12-31', 'period'],
    ['/v1/financials?metric=ggr&limit=5&limit=5', 'limit'],
    ['/v1/financials?metric=ggr&cursor=a&cursor=b', 'cursor'],
    ['/v1/reference?dataset=country_reference&dataset=country_reference', 'dataset'],
    ['/v1/reference?dataset=country_reference&limit=1&limit=2', 'limit'],
  ];
  for (const [path, field] of cases) {
    assert.equal(invalidParams(await service.get(path), field), ['Expected a single value, received several'], path);
  }
});

errors('limit and year must be integers in range', async () => {
  for (const limit of ['0', '1001', '-1', '1.5', 'abc', '1e3', '']) {
    invalidParams(await service.get(`/v1/financials?metric=ggr&limit=${encodeURIComponent(limit)}`), 'limit');
    invalidParams(await service.get(`/v1/reference?dataset=country_reference&limit=${encodeURIComponent(limit)}`), 'limit');
  }
  for (const year of ['20x0', '2020.5', '', 'two thousand']) {
    assert.equal(invalidParams(await service.get(`/v1/financials?metric=ggr&year=2020&year=${encodeURIComponent(year)}`), 'year'), [
      'Expected an integer year; for a span repeat it (year=2019&year=2020) or send period=2019-01-01:2024-12-31',
    ]);
  }
});

errors('reference: unknown, financial or missing dataset, and unknown parameters', async () => {
  const catalog = (dataset: string) => `Unknown dataset: '${dataset}'. Use GET /v1/catalog to list the available datasets.`;
  assertError(await service.get('/v1/reference?dataset=nope'), 400, catalog('nope'));
  assertError(
    await service.get('/v1/reference?dataset=ggr'),
    400,
    `${catalog('ggr')} ggr is a financial dataset: use GET /v1/financials?metric=ggr`,
  );
  assertError(
    await service.get('/v1/reference?dataset=country_refrence'),
    400,
    `${catalog('country_refrence')} Did you mean "country_reference"?`,
  );
  invalidParams(await service.get('/v1/reference'), 'dataset');
  const messages = invalidParams(await service.get('/v1/reference?dataset=country_reference&region=Europe'), 'region');
  assert.match(messages[0]!, /Unknown parameter/);
});

errors('an answer without rows names each filter value the release does not hold, and what was meant', async () => {
  const warned = async (path: string) => {
    const res = await service.get(path);
    assert.is(res.status, 200, res.text);
    assert.is(res.json.meta.row_count, 0, path);
    return res.json.meta.warnings;
  };
  assert.equal(await warned('/v1/financials?metric=ggr&country=france'), ['country "france" matches no value; did you mean "France"?']);
  assert.equal(await warned('/v1/financials?metric=country&country=Irland&country=Atlantis&year=1850'), [
    'year "1850" matches no value; the release holds 2000 to 2030',
    'country "Atlantis" matches no value',
    'country "Irland" matches no value; did you mean "Ireland", "Finland" or "Iceland"?',
  ]);
  assert.equal(await warned('/v1/aggregate?metric=ggr&fx=usd&group_by=region&channel=Onlin'), [
    'channel "Onlin" matches no value; did you mean "Online"?',
    'fx "usd" matches no value; did you mean "USD"?',
  ]);
  // Values the release holds, in a combination no row has: no warning, only no rows.
  assert.is(await warned('/v1/financials?metric=ggr&country=France&state=Nevada'), undefined);
  // Rows found: a value that matched nothing among others that did is not warned of.
  const some = await service.get('/v1/financials?metric=ggr&country=France&country=france&limit=1');
  assert.is(some.json.meta.row_count, 1);
  assert.is(some.json.meta.warnings, undefined);
  // Only JSON has room for it; CSV is the header row alone.
  const csv = await service.get('/v1/financials?metric=ggr&country=france&format=csv');
  assert.is(csv.text.split('\r\n').filter(Boolean).length, 1);
});

errors('unknown paths are JSON 404s; under /v1 a key comes first', async () => {
  for (const path of ['/nope', '/v2/financials', '/v10', '/healthz/x']) {
    assertError(await service.get(path), 404, 'Not found');
    assertError(await service.get(path, { key: null }), 404, 'Not found');
  }
  for (const path of ['/v1', '/v1/financials/ggr', '/v1/catalogue', '/v1/%E0%A4%A']) {
    assertError(await service.get(path), 404, 'Not found');
    assertError(await service.get(path, { key: null }), 401, 'Missing x-api-key header');
  }
});

errors('other methods on known paths are JSON 405s with Allow', async () => {
  for (const path of ['/v1/financials', '/v1/reference', '/v1/catalog', '/healthz']) {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await service.get(path, { method });
      assertError(res, 405, 'Method not allowed');
      assert.match(String(res.headers.allow), /\bGET\b/);
    }
  }
});

errors('the catalog lists every dataset, year among financial dimensions, matching rows', async () => {
  const res = await service.get('/v1/catalog');
  assert.is(res.status, 200);
  assert.equal(
    res.json.datasets.map((d: { name: string }) => d.name),
    DATASETS.map((d) => d.name),
  );
  for (const entry of res.json.datasets) {
    const def = DATASETS.find((d) => d.name === entry.name)!;
    assert.equal(entry.dimensions, def.dimensions);
    assert.equal(entry.metrics, def.metrics);
    assert.type(entry.description, 'string');
    if (def.kind !== 'financial') continue;
    assert.is(entry.dimensions[0], 'year');
    const page = await service.get(`/v1/financials?metric=${def.name}&limit=1`);
    assert.equal(Object.keys(page.json.data[0].dimensions), entry.dimensions);
    assert.equal(Object.keys(page.json.data[0].values), entry.metrics);
    assert.type(page.json.data[0].dimensions.year, 'number');
  }
});

errors("the catalog says what each dimension and each vocabulary's value means, and that derived ratios are fractions", async () => {
  const { json } = await service.get('/v1/catalog');
  const dimensions = new Set(DATASETS.flatMap((d) => d.dimensions));
  assert.equal(Object.keys(json.dimensions).sort(), [...dimensions].sort());
  // Every value the sample holds of a closed vocabulary has its meaning.
  for (const [name, meaning] of Object.entries<{ values?: Record<string, string>; values_listed?: string }>(json.dimensions)) {
    if (meaning.values_listed !== 'all') continue;
    const held = (
      await service.get(`/v1/facets?metric=${DATASETS.find((d) => d.kind === 'financial' && d.dimensions.includes(name))?.name ?? 'ggr'}`)
    ).json.data[name] as { value: string }[] | undefined;
    for (const { value } of held ?? []) assert.type(meaning.values![value], 'string', `${name}=${value} has a meaning`);
  }
  assert.match(json.dimensions.temporal.values.Forecast, /projection/);
  for (const ratio of ['_pct_change', '_share', '_per_<metric>']) assert.match(json.derived[ratio], /fraction|ratio/, ratio);
});

errors('an unexpected failure is a generic JSON 500 and a log line, nothing leaked', async () => {
  const broken = await startTestService();
  try {
    // Take the table away beneath the running server: DuckDB fails the query.
    const connection = await broken.running.services.db.connect();
    const table = broken.running.services.releases.current()!.datasets.get('turnover')!.table;
    await connection.run(`DROP TABLE ${table}`);
    connection.closeSync();
    const res = await broken.get('/v1/financials?metric=turnover');
    assert.is(res.status, 500);
    assert.equal(res.json, { error: 'Internal server error' });
    assert.ok(broken.logs.some((line) => line.msg === 'unhandled error' && /turnover/.test(line.err?.message)));
    assert.is((await broken.get('/v1/financials?metric=ggr&limit=1')).status, 200);
  } finally {
    await broken.stop();
  }
});

errors('healthz needs no key', async () => {
  const res = await service.get('/healthz', { key: null });
  assert.is(res.status, 200);
  assert.equal(res.json, { status: 'ok', release: '2026-11', retained: [] });
});

errors('one JSON log line per request, without the key', async () => {
  const before = service.logs.length;
  await service.get('/v1/catalog');
  const lines = service.logs.slice(before).filter((l) => l.msg === 'request');
  assert.is(lines.length, 1);
  assert.is(lines[0].status, 200);
  assert.is(lines[0].url, '/v1/catalog');
  assert.match(lines[0].key, /^key_/);
  assert.not.match(JSON.stringify(lines[0]), /sk_live_/);
});

errors.run();

const loading = suite('while the first release loads');
loading('data routes answer 503 with Retry-After; catalog and key checks still work', async () => {
  const stateDir = await tempDir();
  const keys = await FileKeyStore.open(stateDir);
  const { key } = await keys.create('early');
  const db = await Database.open({ connections: 1, threads: 1 });
  const limits = {
    requests: new MemoryLimiter({ perMinute: 100, perDay: 10_000 }, Date.now),
    badKeys: new MemoryLimiter({ perMinute: 30 }, Date.now),
    exports: new MemoryLimiter({ perMinute: 50, perDay: 50 }, Date.now),
    claims: new MemoryLimiter({ perMinute: 10 }, Date.now),
    heavy: new MemoryBudget(60_000, Date.now),
  };
  const log = createLogger('silent');
  const metrics = new Metrics();
  const cursors = new CursorCodec(Buffer.alloc(32));
  // Never reloaded: the first release is still loading for as long as this test runs.
  const releases = new Releases({
    dataDir: stateDir,
    db,
    log,
    clock: Date.now,
    metrics,
    graceMs: 60_000,
    capacity: 3,
    pollMs: 1000,
    currentCacheControl: 'private, max-age=60',
  });
  const services = {
    db,
    releases,
    releaseEvents: new ReleaseEvents({ dataDir: stateDir, db, publications: () => releases.publications() }),
    notifications: { feedsPublic: true },
    releaseLoadWaitMs: 1000,
    queryTimeoutMs: 15_000,
    scratchDir: os.tmpdir(),
    clientsDir: os.tmpdir(),
    cursors,
    cache: new NoopResponseCache(),
    aggregates: new KeptResults<AggregateResult>({ maxBytes: 1 << 20, sizeOf: () => 1, counted: () => {}, clock: Date.now }),
    aggregateMaxGroups: 1000,
    facetValues: 50,
    revisions: new KeptResults<RevisionDiff>({ maxBytes: 1 << 20, sizeOf: () => 1, counted: () => {}, clock: Date.now }),
    history: new KeptResults<HistoryTable>({ maxBytes: 1 << 20, sizeOf: () => 1, counted: () => {}, clock: Date.now }),
    historyMaxReleases: 60,
    keys,
    limits,
    clock: Date.now,
    log,
    metrics,
    invites: await FileInviteStore.open(stateDir),
    admission: new Admission({ concurrency: 2, perKey: 2, maxWaitMs: 1000, clock: Date.now }),
    exports: { open: new OpenExports(2), idleMs: 60_000 },
    // This app is asked only for data routes; its webhooks are never reached.
    webhooks: {} as Services['webhooks'],
    usage: {
      log: new UsageLog(new MemoryUsageStore(Date.now), Date.now, 60_000),
      guard: new MemoryLimiter({ perMinute: 30 }, Date.now),
      backend: 'memory' as const,
      counting: true,
    },
  };
  const server = http.createServer(createApp(services).callback()).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    for (const path of ['/v1/financials?metric=ggr', '/v1/reference?dataset=country_reference', '/v1/aggregate?metric=ggr&fx=USD']) {
      const res = await send(`${url}${path}`, { headers: { 'x-api-key': key } });
      assertError(res, 503, 'Service is starting: data is still loading');
      assert.is(res.headers['retry-after'], '5');
    }
    assert.is((await send(`${url}/v1/catalog`, { headers: { 'x-api-key': key } })).status, 200);
    assertError(await send(`${url}/v1/financials?metric=ggr`), 401, 'Missing x-api-key header');
    const health = await send(`${url}/healthz`);
    assert.equal([health.status, health.json], [503, { status: 'loading' }]);
  } finally {
    server.close();
    db.close();
    await fs.rm(stateDir, { recursive: true });
  }
});
loading.run();
