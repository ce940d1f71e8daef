import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { adminCli } from './helpers/admin-cli.ts';
import { parseCsv } from './helpers/csv.ts';
import { until } from './helpers/redis.ts';
import { startTestService, type TestService, tempDir } from './helpers/service.ts';

// GET /v1/usage/daily and `npm run admin -- usage`: each answered request counted in
// its key's day after its response, in the store both read.

const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

const test = suite('GET /v1/usage/daily');
let service: TestService;
let stateDir: string;
test.before(async () => {
  stateDir = await tempDir();
  service = await startTestService({ stateDir, env: { RATE_LIMIT_PER_MINUTE: '5' } });
});
test.after(async () => {
  await service?.stop();
});

const todayOf = async (svc: TestService) => {
  const res = await svc.get('/v1/usage/daily');
  assert.is(res.status, 200, res.text);
  return res.json.days.at(-1);
};

test('refused.minute equals the 429s the client saw, by_endpoint the requests it sent', async () => {
  const sent = ['/v1/catalog', '/v1/catalog', '/v1/releases', '/v1/catalog', '/v1/catalog', '/v1/catalog', '/v1/releases', '/v1/nope'];
  const statuses: number[] = [];
  for (const path of sent) statuses.push((await service.get(path)).status);
  const refused = statuses.filter((s) => s === 429).length;
  assert.is(refused, 3, String(statuses));
  // Counted once each response has closed: wait for the last, bounded.
  assert.ok(await until(async () => (await todayOf(service)).requests === sent.length, 5000));
  const day = await todayOf(service);
  assert.is(day.date, today());
  assert.equal(day.refused, { minute: refused });
  assert.equal(day.by_endpoint, { '/v1/catalog': 5, '/v1/releases': 2, unmatched: 1 });
  assert.equal(day.by_status, { 200: 5, 429: 3 });
  assert.ok(day.bytes_sent > 0);
  assert.is(day.exports, 0);
});

test('by default the last 7 UTC days, every one listed; CSV has a row a day', async () => {
  const json = (await service.get('/v1/usage/daily')).json;
  assert.is(json.start, daysAgo(6));
  assert.is(json.end, today());
  assert.equal(
    json.days.map((d: { date: string }) => d.date),
    [6, 5, 4, 3, 2, 1, 0].map(daysAgo),
  );
  assert.is(json.days[0].requests, 0);
  const csv = await service.get(`/v1/usage/daily?start=${daysAgo(1)}&format=csv`);
  assert.is(csv.status, 200);
  assert.match(String(csv.headers['content-type']), /^text\/csv/);
  assert.is(csv.headers['cache-control'], 'no-store');
  const rows = parseCsv(csv.text);
  assert.equal(rows[0]!.slice(0, 5), ['date', 'requests', 'exports', 'bytes_sent', 'heavy_seconds']);
  assert.ok(rows[0]!.includes('refused:minute') && rows[0]!.includes('endpoint:/v1/catalog') && rows[0]!.includes('status:429'));
  assert.equal(
    rows.slice(1).map((r) => r[0]),
    [daysAgo(1), today()],
  );
  assert.is(rows[2]![rows[0]!.indexOf('refused:minute')], '3');
});

test('a bad range gets a 400 naming the field', async () => {
  const fields = async (query: string) => {
    const res = await service.get(`/v1/usage/daily?${query}`);
    assert.is(res.status, 400, query);
    return Object.keys(res.json.details.fieldErrors);
  };
  assert.equal(await fields('start=2026-02-30'), ['start']);
  assert.equal(await fields('end=yesterday'), ['end']);
  assert.equal(await fields(`end=${daysAgo(-1)}`), ['end']);
  assert.equal(await fields(`start=${today()}&end=${daysAgo(1)}`), ['start']);
  assert.equal(await fields(`start=${daysAgo(92)}`), ['start'], '93 days');
  assert.equal(await fields('format=xml'), ['format']);
  assert.equal(await fields('year=2024'), ['year']);
  assert.is((await service.get(`/v1/usage/daily?start=${daysAgo(91)}`)).status, 200, '92 days');
});

test('`admin usage` shows the key by id and by full key; --top lists it with its client; both survive a restart', async () => {
  const byId = await adminCli(service, 'usage', (await service.admin('GET', '/keys')).json.keys[0].id, '--days', '2', '--json');
  assert.is(byId.code, 0, byId.stderr);
  const days = JSON.parse(byId.stdout).days;
  assert.is(days.length, 2);
  const byKey = await adminCli(service, 'usage', service.key, '--days', '2', '--json');
  assert.equal(JSON.parse(byKey.stdout).days, days);
  const top = await adminCli(service, 'usage', '--top', '20', '--days', '3');
  assert.is(top.code, 0, top.stderr);
  assert.match(top.stdout, /^key_[0-9a-f]{16}\s+test-suite\s+8\s+3\s+0\s/m);

  const requests = days.at(-1).requests;
  await service.stop();
  service = await startTestService({ stateDir, env: { RATE_LIMIT_PER_MINUTE: '5' } });
  const after = await adminCli(service, 'usage', '--top', '1', '--json');
  assert.is(JSON.parse(after.stdout).keys[0].requests, requests, 'read back from STATE_DIR/usage.json');
  const unknown = await adminCli(service, 'usage', 'key_0000000000000000');
  assert.is(unknown.code, 1);
  assert.match(unknown.stderr, /No key matches/);
});

test.run();
