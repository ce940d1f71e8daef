import fs from 'node:fs/promises';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as errors from '../src/errors/index.ts';
import { REDIS_BINARY, REDIS_SKIP_REASON, startRedis } from '../tools/redis-server.ts';
import { send, startTestService, type TestService } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';

/** One sample of Prometheus text exposition: name, labels, value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => [k!, v!]));
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample named `name` whose labels include `labels`; 0 when none. */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value ?? 0;
}

async function scrape(service: TestService): Promise<Sample[]> {
  // No admin token: scrapers cannot be given one (docs/deploy.md "Metrics").
  const res = await send(`${service.adminUrl}/metrics`);
  assert.is(res.status, 200);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return parseMetrics(res.text);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let service: TestService;
const ops = suite('operations');
ops.before(async () => {
  service = await startTestService();
});
ops.after(async () => {
  await service.stop();
});

ops('/metrics after known traffic counts requests by route, status and error code, cache hits and misses, DuckDB work', async () => {
  const before = await scrape(service);
  for (let i = 0; i < 3; i++) assert.is((await service.get('/v1/catalog')).status, 200);
  assert.is((await service.get('/v1/financials?metric=nope')).status, 400);
  assert.is((await service.get('/v1/catalog', { key: null })).status, 401);
  assert.is((await service.get('/v1/nothing')).status, 404);
  // The same uncached page twice: one miss that runs a query, then one hit that does not.
  const page = '/v1/financials?metric=fx&limit=7&year=2021';
  const mid = await scrape(service);
  assert.is((await service.get(page)).status, 200);
  assert.is((await service.get(page)).status, 200);
  const after = await scrape(service);

  const delta = (name: string, labels: Record<string, string> = {}) => value(after, name, labels) - value(before, name, labels);
  const requests = 'dqs_http_requests_total';
  assert.is(delta(requests, { listener: 'public', route: '/v1/catalog', status: '200', code: '' }), 3);
  assert.is(delta(requests, { listener: 'public', route: '/v1/financials', status: '400', code: 'unknown_metric' }), 1);
  assert.is(delta(requests, { listener: 'public', route: '/v1/catalog', status: '401', code: 'missing_key' }), 1);
  assert.is(delta(requests, { listener: 'public', route: 'unmatched', status: '404', code: 'not_found' }), 1);
  assert.is(delta(requests, { listener: 'public', route: '/v1/financials', status: '200', code: '' }), 2);
  assert.is(delta('dqs_http_request_duration_seconds_count', { listener: 'public', route: '/v1/catalog' }), 4, 'the 401 is timed too');
  const lookups = (result: string) =>
    value(after, 'dqs_response_cache_lookups_total', { result }) - value(mid, 'dqs_response_cache_lookups_total', { result });
  assert.is(lookups('miss'), 1);
  assert.is(lookups('hit'), 1);
  assert.ok(value(after, 'dqs_response_cache_bytes') > 0);
  assert.ok(delta('dqs_duckdb_query_seconds_count') >= 1);
  assert.is(delta('dqs_duckdb_pool_wait_seconds_count'), delta('dqs_duckdb_query_seconds_count'));
  assert.is(value(after, 'dqs_release_info', { release: '2026-11' }), 1);
  assert.ok(value(after, 'dqs_release_age_seconds') > 0);
  assert.ok(value(after, 'dqs_process_resident_memory_bytes') > 0);
  assert.ok(value(after, 'dqs_nodejs_heap_size_used_bytes') > 0);
  assert.is(value(after, 'dqs_redis_errors_total'), 0);
});

ops('docs/deploy.md "Metrics" lists every metric /metrics exposes, and no other', async () => {
  const exposed = [...(await send(`${service.adminUrl}/metrics`)).text.matchAll(/^# HELP (dqs_\w+)/gm)]
    .map((m) => m[1]!)
    // prom-client's defaults, one row of the table.
    .filter((name) => !/^dqs_(process|nodejs)_/.test(name));
  const doc = await fs.readFile(path.join(import.meta.dirname, '..', 'docs', 'deploy.md'), 'utf8');
  const table = doc.slice(doc.indexOf('## Metrics'));
  const listed = [...table.matchAll(/^\| `(dqs_\w+)` \|/gm)].map((m) => m[1]!);
  assert.equal([...new Set(exposed)].sort(), listed.sort());
});

ops('the Explore and claim pages and their files are counted under their route patterns, none as unmatched', async () => {
  const invite = await service.admin('POST', '/invites', { client: 'Route labels' });
  assert.is(invite.status, 201, invite.text);
  const token = new URL(invite.json.url).pathname.split('/').at(-1)!;
  const before = await scrape(service);
  const page = await send(`${service.url}/explore`);
  const script = /src="\/explore\/assets\/([^"]+\.js)"/.exec(page.text)?.[1];
  assert.ok(script, page.text);
  const answers = {
    '/explore': page,
    '/explore/aggregate': await send(`${service.url}/explore/aggregate?metric=ggr`),
    '/explore/assets/:file': await send(`${service.url}/explore/assets/${script}`),
    '/claim/:token': await send(`${service.url}/claim/${token}`),
    '/claim/assets/:file': await send(`${service.url}/claim/assets/claim.css`),
  };
  const after = await scrape(service);
  const counted = (samples: Sample[], labels: Record<string, string>) =>
    samples
      .filter((s) => s.name === 'dqs_http_requests_total' && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((sum, s) => sum + s.value, 0);
  for (const [route, res] of Object.entries(answers)) {
    assert.is(res.status, 200, route);
    const labels = { listener: 'public', route, status: '200', code: '' };
    assert.is(counted(after, labels) - counted(before, labels), 1, route);
  }
  const unmatched = { listener: 'public', route: 'unmatched' };
  assert.is(counted(after, unmatched) - counted(before, unmatched), 0);
});

ops('every other admin route still needs the token', async () => {
  assert.is((await send(`${service.adminUrl}/keys`)).status, 401);
  assert.is((await send(`${service.adminUrl}/metrics`, { method: 'POST' })).status, 401);
});

ops('every response carries X-Request-Id; a well-formed one from the client is kept, anything else replaced', async () => {
  const ok = await service.get('/v1/catalog');
  assert.match(String(ok.headers['x-request-id']), UUID);
  for (const res of [
    await service.get('/v1/catalog', { key: null }),
    await service.get('/nowhere'),
    await service.get('/v1/financials?metric=ggr&cursor=x'),
  ]) {
    assert.ok(res.status >= 400);
    assert.match(String(res.headers['x-request-id']), UUID);
  }
  const mine = 'trace-01J9Z:abc_DEF.42';
  assert.is((await service.get('/v1/catalog', { headers: { 'x-request-id': mine } })).headers['x-request-id'], mine);
  for (const bad of ['has space', 'x'.repeat(129), 'a/b', '']) {
    const res = await service.get('/v1/catalog', { headers: { 'x-request-id': bad } });
    assert.match(String(res.headers['x-request-id']), UUID, bad);
  }
  assert.match(String((await send(`${service.adminUrl}/metrics`)).headers['x-request-id']), UUID);
});

ops('the request log line carries the request id and the error code', async () => {
  const res = await service.get('/v1/financials?metric=ggr&period=bad', { headers: { 'x-request-id': 'find-me-400' } });
  assert.is(res.status, 400);
  const line = service.logs.find((l) => l.msg === 'request' && l.reqId === 'find-me-400');
  assert.ok(line, 'request line with the id');
  assert.is(line.status, 400);
  assert.is(line.code, 'invalid_parameters');
});

ops("a user's 500 is found in the logs by the id in its response", async () => {
  const broken = await startTestService();
  try {
    // Take the table away beneath the running server: DuckDB fails the query.
    const connection = await broken.running.services.db.connect();
    await connection.run(`DROP TABLE ${broken.running.services.releases.current()!.datasets.get('country')!.table}`);
    connection.closeSync();
    const res = await broken.get('/v1/financials?metric=country');
    assert.is(res.status, 500);
    assert.equal(res.json, { error: 'Internal server error' });
    const id = String(res.headers['x-request-id']);
    assert.match(id, UUID);
    const lines = broken.logs.filter((l) => l.reqId === id);
    assert.equal(lines.map((l) => l.msg).sort(), ['request', 'unhandled error']);
    assert.match(lines.find((l) => l.msg === 'unhandled error').err.message, /country/);
    assert.is(lines.find((l) => l.msg === 'request').code, 'internal');
    const samples = await scrape(broken);
    assert.is(value(samples, 'dqs_http_requests_total', { route: '/v1/financials', status: '500', code: 'internal' }), 1);
  } finally {
    await broken.stop();
  }
});

ops('a refused request counts as a limiter refusal and a rate_limited request', async () => {
  const limited = await startTestService({ env: { RATE_LIMIT_PER_MINUTE: '2' } });
  try {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await limited.get('/v1/catalog')).status);
    assert.equal(statuses, [200, 200, 429]);
    const samples = await scrape(limited);
    assert.is(value(samples, 'dqs_limiter_refusals_total', { limiter: 'key' }), 1);
    assert.is(value(samples, 'dqs_http_requests_total', { route: '/v1/catalog', status: '429', code: 'rate_limited' }), 1);
  } finally {
    await limited.stop();
  }
});

ops.run();

if (!REDIS_BINARY) skippedSuite('operations with Redis', REDIS_SKIP_REASON);
else {
  const withRedis = suite('operations with Redis');
  withRedis('a Redis that stops answering shows in dqs_redis_errors_total while requests are still served', async () => {
    const redis = await startRedis();
    const served = await startTestService({ env: { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '200' } });
    try {
      assert.is((await served.get('/v1/catalog')).status, 200);
      assert.is(value(await scrape(served), 'dqs_redis_errors_total'), 0);
      redis.pause();
      try {
        // The key is known to this replica; the limiter's command times out and it fails open.
        assert.is((await served.get('/v1/catalog')).status, 200);
      } finally {
        redis.resume();
      }
      assert.ok(value(await scrape(served), 'dqs_redis_errors_total') >= 1);
    } finally {
      await served.stop();
      await redis.stop();
    }
  });
  withRedis.run();
}

const codes = suite('error codes');

codes('every error in the catalog has its own stable snake_case code', () => {
  const instances = [
    new errors.InvalidParametersError({}),
    new errors.UnknownMetricError('x'),
    new errors.UnknownDatasetError('x'),
    new errors.InvalidFilterDimensionError('a', 'b', []),
    new errors.InvalidCursorError(),
    new errors.MissingKeyError(),
    new errors.InvalidKeyError(),
    new errors.DuplicateKeyHeaderError(),
    new errors.TooManyRequestsError(1),
    new errors.KeysUnavailableError(),
    new errors.AdminUnauthorizedError(),
    new errors.QueryTooLongError(1),
    new errors.MalformedRequestError(),
    new errors.HeadersTooLargeError(),
    new errors.RequestTimeoutError(),
    new errors.NotFoundError(),
    new errors.MethodNotAllowedError([]),
    new errors.NotReadyError(),
    new errors.InternalError(),
    new errors.NotAcceptableError(['application/json'], ['json']),
    new errors.ConflictError('x'),
    new errors.ReleaseLoadError('x'),
    new errors.InvalidGroupByError('a', 'b', []),
    new errors.InvalidMeasureError('a', 'b', []),
    new errors.InvalidOrderError('a', []),
    new errors.MixedUnitsError('x'),
    new errors.MixedTotalsError('x'),
    new errors.RateSumError('x'),
    new errors.TooManyGroupsError(2, 1),
    new errors.UnknownReleaseError('2026-01'),
    new errors.NoReleaseAsOfError('2026-01-01T23:59:59.999Z', '2026-02-01T00:00:00.000Z'),
    new errors.ReleaseLoadingError('2026-01'),
    new errors.ReleaseLoadRunningError('2026-01'),
    new errors.ReleaseUnavailableError('2026-01'),
    new errors.ExportLimitError(50, 1),
    new errors.RangeNotSatisfiableError(10),
    new errors.CompareNeedsYearError(),
    new errors.InvalidShareError('x', []),
    new errors.InvalidPerError('x', 'y', []),
    new errors.DerivedNeedsSumError('share', 'x:avg'),
    new errors.RollupConflictError('having'),
    new errors.InvalidHavingError('x.gt.1', []),
    new errors.SeriesNeedsYearError('index'),
    new errors.CagrWithYearError(),
    new errors.SeriesConflictError('cagr', 'index'),
    new errors.BusyError(10),
    new errors.ExportsOpenError(2, 10),
    new errors.QueryTimeoutError(15_000, false),
    new errors.ClientGoneError(),
    new errors.HeavyBudgetError(60, 1),
    new errors.StoreUnavailableError(),
    new errors.UsageLimitError(30, 1),
    new errors.UsageUnavailableError(),
    new errors.EndpointUnreachableError('answered 500'),
    new errors.BlockedAddressError('127.0.0.1 is a loopback address'),
    new errors.TooManyWebhooksError(5),
    new errors.WebhooksUnavailableError(),
  ];
  const catalog = Object.values(errors).filter((e) => typeof e === 'function' && e.prototype instanceof errors.ApiError);
  assert.is(instances.length, catalog.length, 'every class of the catalog is listed here');
  const byCode = new Map(instances.map((e) => [e.code, e]));
  assert.is(byCode.size, instances.length, 'codes are unique');
  for (const e of instances) assert.match(e.code, /^[a-z]+(?:_[a-z]+)*$/, e.name);
  assert.is(new errors.TooManyRequestsError(3).code, 'rate_limited');
  assert.is(new errors.InvalidParametersError({}).code, 'invalid_parameters');
  // Bodies stay the spec's: the code is never in them.
  for (const e of instances) assert.not.ok('code' in e.body, e.name);
});

codes('a catalog class that names no code gets one from its class name', () => {
  class SomethingNewError extends errors.ApiError {
    constructor() {
      super(418, { error: 'new' });
    }
  }
  assert.is(new SomethingNewError().code, 'something_new');
});

codes.run();
