import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { DataQueryClient, DataQueryError } from 'data-query-client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { adminCli } from './helpers/admin-cli.ts';
import { runQueryCli } from './helpers/query-cli.ts';
import { until } from './helpers/redis.ts';
import { FIXTURE_RELEASE, ownFixtureDataDir, publishNextMonth, send, startTestService, type TestService } from './helpers/service.ts';
import { LOOPBACK_WEBHOOKS, type Receiver, startReceiver, verified } from './helpers/webhook-receiver.ts';

// Webhooks end to end: a real service on a DATA_DIR of its own, `etl load` publishing
// into it, and a real receiver on loopback verifying with the reference verifier.

const ROOT = path.resolve(import.meta.dirname, '..');
const run = promisify(execFile);

const test = suite('webhooks');
let service: TestService;
let receiver: Receiver;
let dataDir: string;
let release = FIXTURE_RELEASE;

async function call(method: string, pathName: string, body?: unknown, key = service.key) {
  return send(`${service.url}${pathName}`, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Publishes the next month with `etl load`'s own function; returns its id. */
async function publish(): Promise<string> {
  release = await publishNextMonth(dataDir, release);
  return release;
}

/** The value of a sample of /metrics (0 when absent). */
const metric = async (sample: string) =>
  Number(new RegExp(`^${sample.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec((await send(`${service.adminUrl}/metrics`)).text)?.[1] ?? 0);

const newKey = async () => (await service.admin('POST', '/keys', { client: `other-${Math.random()}` })).json.key as string;

test.before(async () => {
  dataDir = await ownFixtureDataDir('dqs-webhooks-');
  receiver = await startReceiver();
  service = await startTestService({
    dataDir,
    env: { ...LOOPBACK_WEBHOOKS, RELEASE_POLL_MS: '100', WEBHOOK_RETRY_SCHEDULE: '1500ms,1500ms,1500ms' },
  });
});

test.after(async () => {
  await service.stop();
  await receiver.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

test('creating an endpoint sends it a signed webhook.test first; 201 with the secret once; listed without it', async () => {
  receiver.script([]);
  const res = await call('POST', '/v1/webhooks', { url: `${receiver.url}/a` });
  assert.is(res.status, 201, res.text);
  assert.match(res.json.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  assert.equal(res.json.events, ['release.published', 'release.withdrawn']);
  assert.is(res.json.enabled, true);
  const test = receiver.received.at(-1)!;
  assert.equal((verified(res.json.secret, test) as { type: string }).type, 'webhook.test');
  const listed = await call('GET', '/v1/webhooks');
  assert.equal(
    listed.json.webhooks.map((w: { id: string }) => w.id),
    [res.json.id],
  );
  assert.not.ok(listed.text.includes('whsec_'));
  assert.is((await call('GET', `/v1/webhooks/${res.json.id}`, undefined, await newKey())).status, 404, "another key's webhook");
  assert.is((await call('DELETE', `/v1/webhooks/${res.json.id}`)).status, 204);
  assert.is((await call('GET', `/v1/webhooks/${res.json.id}`)).status, 404);
});

test('a URL that does not answer 2xx is 422 endpoint_unreachable saying what it answered; a redirect is not followed', async () => {
  receiver.script([{ status: 500 }]);
  const failed = await call('POST', '/v1/webhooks', { url: `${receiver.url}/fails` });
  assert.is(failed.status, 422);
  assert.match(failed.json.error, /^endpoint_unreachable: .*answered 500/);
  receiver.script([{ status: 302, headers: { location: `${receiver.url}/elsewhere` } }]);
  const before = receiver.received.length;
  const redirected = await call('POST', '/v1/webhooks', { url: `${receiver.url}/moves` });
  assert.is(redirected.status, 422);
  assert.match(redirected.json.error, /answered 302, a redirect to .*\/elsewhere, which is not followed/);
  assert.equal(
    receiver.received.slice(before).map((r) => r.path),
    ['/moves'],
  );
});

test('a sixth endpoint for one key is 409', async () => {
  receiver.script([]);
  const key = await newKey();
  for (let i = 0; i < 5; i++) assert.is((await call('POST', '/v1/webhooks', { url: `${receiver.url}/n${i}` }, key)).status, 201);
  const sixth = await call('POST', '/v1/webhooks', { url: `${receiver.url}/n5` }, key);
  assert.is(sixth.status, 409);
  assert.match(sixth.json.error, /already has 5 webhooks/);
});

test('a publication is delivered signed, msg_<seq>, and a flipped byte does not verify; the log lists it; redelivery keeps the id', async () => {
  receiver.script([]);
  const made = (await call('POST', '/v1/webhooks', { url: `${receiver.url}/deliver` })).json;
  const published = await publish();
  const loaded = Date.now();
  assert.ok(await until(() => receiver.received.some((r) => r.path === '/deliver' && r.body.includes(`"release":"${published}"`)), 60_000));
  const delivery = receiver.received.find((r) => r.path === '/deliver' && r.body.includes(`"release":"${published}"`))!;
  console.log(`webhooks: etl load ended → first delivery, one replica: ${delivery.at - loaded} ms`);
  assert.match(delivery.headers['webhook-id']!, /^msg_\d+$/);
  const event = verified(made.secret, delivery) as any;
  assert.is(event.type, 'release.published');
  assert.is(event.data.release, published);
  assert.ok(event.data.links.catalog.endsWith(`/v1/catalog?release=${published}`));
  const flipped = delivery.body.replace(
    published,
    published.replace(/.$/, (d) => String((Number(d) + 1) % 10)),
  );
  assert.throws(() => verified(made.secret, { ...delivery, body: flipped }));
  const log = await call('GET', `/v1/webhooks/${made.id}/deliveries`);
  assert.is(log.status, 200);
  const entry = log.json.deliveries.find((d: { msg_id: string }) => d.msg_id === delivery.headers['webhook-id']);
  assert.is(entry.status_code, 200);
  assert.is(entry.attempt, 1);
  const again = await call('POST', `/v1/webhooks/${made.id}/deliveries/${entry.msg_id}/redeliver`);
  assert.is(again.status, 200, again.text);
  assert.is(again.json.attempt, 2);
  assert.is(receiver.of(entry.msg_id).filter((r) => r.path === '/deliver').length, 2);
  assert.is(receiver.of(entry.msg_id).at(-1)!.body, delivery.body, 'the same message');
  await call('DELETE', `/v1/webhooks/${made.id}`);
});

test('answers 500, 500, 200: three attempts, one webhook-id, rising timestamps; /metrics counts two retries and a delivery', async () => {
  receiver.script([]);
  const retries = await metric('dqs_webhook_attempts_total{outcome="retry"}');
  const delivered = await metric('dqs_webhook_attempts_total{outcome="delivered"}');
  const timed = await metric('dqs_webhook_delivery_seconds_count');
  const made = (await call('POST', '/v1/webhooks', { url: `${receiver.url}/flaky` })).json;
  receiver.script([{ status: 500 }, { status: 500 }], '/flaky');
  // Every enabled endpoint (earlier tests' too) gets this publication.
  const endpoints = (await call('GET', '/v1/webhooks')).json.webhooks.filter((w: { enabled: boolean }) => w.enabled).length;
  const published = await publish();
  const attempts = () => receiver.received.filter((r) => r.path === '/flaky' && r.body.includes(`"release":"${published}"`));
  assert.ok(await until(() => attempts().length >= 3, 60_000), `${attempts().length} attempts`);
  const list = attempts();
  assert.is(list.length, 3);
  assert.is(new Set(list.map((r) => r.headers['webhook-id'])).size, 1);
  const stamps = list.map((r) => Number(r.headers['webhook-timestamp']));
  assert.ok(stamps[0]! < stamps[1]! && stamps[1]! < stamps[2]!, stamps.join());
  for (const r of list) verified(made.secret, r);
  const log = (await call('GET', `/v1/webhooks/${made.id}/deliveries?limit=2`)).json;
  assert.equal(
    log.deliveries.map((d: { attempt: number; status_code: number }) => [d.attempt, d.status_code]),
    [
      [3, 200],
      [2, 500],
    ],
  );
  const rest = (await call('GET', `/v1/webhooks/${made.id}/deliveries?limit=2&cursor=${log.pagination.cursor}`)).json;
  assert.equal(rest.deliveries[0].attempt, 1);
  // At least: the earlier test's publication may still be settling with its other endpoints.
  const deliveredNow = () => metric('dqs_webhook_attempts_total{outcome="delivered"}');
  assert.ok(await until(async () => (await deliveredNow()) >= delivered + endpoints, 30_000), `${await deliveredNow()} delivered`);
  assert.ok((await metric('dqs_webhook_delivery_seconds_count')) >= timed + endpoints);
  assert.is(await metric('dqs_webhook_attempts_total{outcome="retry"}'), retries + 2, 'only /flaky failed');
  await call('DELETE', `/v1/webhooks/${made.id}`);
});

test("a 410 disables the endpoint, which says why, and the next publication sends it nothing; nor to a revoked key's", async () => {
  receiver.script([]);
  const gone = (await call('POST', '/v1/webhooks', { url: `${receiver.url}/gone` })).json;
  await call('POST', '/v1/webhooks', { url: `${receiver.url}/kept` });
  const otherKey = await newKey();
  await call('POST', '/v1/webhooks', { url: `${receiver.url}/revoked` }, otherKey);
  receiver.script([{ status: 410 }], '/gone');
  const got = (where: string, id: string) => receiver.received.some((r) => r.path === where && r.body.includes(`"release":"${id}"`));
  const first = await publish();
  assert.ok(await until(() => got('/kept', first) && got('/gone', first) && got('/revoked', first), 60_000));
  assert.ok(await until(async () => (await call('GET', `/v1/webhooks/${gone.id}`)).json.enabled === false, 10_000));
  assert.match((await call('GET', `/v1/webhooks/${gone.id}`)).json.disabled_reason, /^msg_\d+ was answered 410 Gone at /);
  assert.is(await metric('dqs_webhooks_disabled_total{reason="gone"}'), 1);
  assert.is(await metric('dqs_webhook_attempts_total{outcome="gone"}'), 1);
  assert.is((await service.admin('POST', '/keys/revoke', { ref: otherKey })).status, 200);
  const second = await publish();
  assert.ok(await until(() => got('/kept', second), 60_000));
  await new Promise((resolve) => setTimeout(resolve, 500)); // a tick or two of the watcher after the healthy one
  assert.not.ok(got('/gone', second), 'the disabled endpoint was sent the next publication');
  assert.not.ok(got('/revoked', second), "the revoked key's endpoint was sent the next publication");
  const listed = await adminCli(service, 'webhook', 'list');
  assert.is(listed.code, 0, listed.stderr);
  const row = (where: string) => listed.stdout.split('\n').find((line) => line.includes(`${receiver.url}${where} `)) ?? '';
  assert.match(row('/gone'), /disabled: msg_\d+ was answered 410 Gone/);
  assert.match(row('/revoked'), /stopped: key revoked/);
  assert.match(row('/kept'), / ok /);
});

test('a rotated secret signs beside the old one; each verifies', async () => {
  receiver.script([]);
  const made = (await call('POST', '/v1/webhooks', { url: `${receiver.url}/rotates` })).json;
  const rotated = await call('POST', `/v1/webhooks/${made.id}/rotate-secret`);
  assert.is(rotated.status, 200);
  assert.ok(Date.parse(rotated.json.previous_expires_at) - Date.now() > 23 * 3_600_000);
  const sent = await call('POST', `/v1/webhooks/${made.id}/test`);
  assert.is(sent.json.status_code, 200);
  const request = receiver.of(sent.json.msg_id)[0]!;
  assert.is(request.headers['webhook-signature']!.split(' ').length, 2);
  verified(made.secret, request);
  verified(rotated.json.secret, request);
  await call('DELETE', `/v1/webhooks/${made.id}`);
});

test('without the allow settings: http:, 127.0.0.1, [::ffff:127.0.0.1] and a name resolving to loopback are refused with blocked_address', async () => {
  const strict = await startTestService({ dataDir });
  try {
    const create = async (url: string) =>
      send(`${strict.url}/v1/webhooks`, {
        method: 'POST',
        headers: { 'x-api-key': strict.key, 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      });
    const port = new URL(receiver.url).port;
    const before = receiver.received.length;
    const plain = await create(receiver.url);
    assert.is(plain.status, 422);
    assert.match(plain.json.error, /^blocked_address: .*WEBHOOK_ALLOW_HTTP=true/);
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', 'localhost']) {
      const res = await create(`https://${host}:${port}/`);
      assert.is(res.status, 422, host);
      assert.match(res.json.error, /^blocked_address: .* is (a loopback|an IPv4-mapped IPv6) address; .*WEBHOOK_ALLOW_CIDRS/, host);
    }
    assert.is(receiver.received.length, before, 'nothing reached the receiver');
  } finally {
    await strict.stop();
  }
});

test('the typed client makes, lists, tests, rotates, pages and deletes webhooks; a refusal is a DataQueryError with the text', async () => {
  receiver.script([]);
  const client = new DataQueryClient({ baseUrl: service.url, apiKey: await newKey() });
  const made = await client.webhooks.create(`${receiver.url}/client`, ['release.published']);
  assert.match(made.secret, /^whsec_/);
  assert.equal(
    (await client.webhooks.list()).map((w) => [w.id, w.events]),
    [[made.id, ['release.published']]],
  );
  const sent = await client.webhooks.test(made.id);
  assert.is(sent.status_code, 200);
  const rotated = await client.webhooks.rotateSecret(made.id);
  verified(rotated.secret, receiver.of((await client.webhooks.test(made.id)).msg_id)[0]!);
  const log = [];
  for await (const delivery of client.webhooks.deliveries(made.id)) log.push(delivery.msg_id);
  assert.is(log.length, 2);
  assert.is((await client.webhooks.update(made.id, { enabled: false })).disabled_reason, 'disabled by PATCH');
  await client.webhooks.delete(made.id);
  const missing = await client.webhooks.get(made.id).catch((err: DataQueryError) => err);
  assert.instance(missing, DataQueryError);
  assert.is((missing as DataQueryError).status, 404);
  receiver.script([{ status: 503 }]);
  const refused = await client.webhooks.create(`${receiver.url}/down`).catch((err: DataQueryError) => err);
  assert.match((refused as DataQueryError).error, /^endpoint_unreachable: .*answered 503/);
});

test('the query CLI makes, lists and deletes a webhook, and says why one is refused', async () => {
  receiver.script([]);
  const env = { DQS_API_KEY: await newKey(), DQS_URL: service.url };
  const made = await runQueryCli(['webhooks', 'create', `${receiver.url}/cli`], env);
  assert.is(made.code, 0, made.stderr);
  const { id, secret } = JSON.parse(made.stdout.toString());
  assert.match(secret, /^whsec_/);
  const listed = await runQueryCli(['webhooks', 'list'], env);
  assert.equal(
    JSON.parse(listed.stdout.toString()).map((w: { id: string }) => w.id),
    [id],
  );
  assert.is((await runQueryCli(['webhooks', 'delete', id], env)).code, 0);
  const refused = await runQueryCli(['webhooks', 'create', 'https://127.0.0.1:1/'], { ...env, DQS_URL: service.url });
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /error 422: endpoint_unreachable: .*ECONNREFUSED/);
});

test('WEBHOOK_ALLOW_CIDRS=0.0.0.0/0 stops the start, saying why', async () => {
  const failed = await run(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, WEBHOOK_ALLOW_CIDRS: '0.0.0.0/0', PORT: '0', ADMIN_PORT: '0' },
  }).then(
    () => undefined,
    (err: { code: number; stderr: string }) => err,
  );
  assert.ok(failed, 'the server started');
  assert.is(failed.code, 2);
  assert.match(failed.stderr, /WEBHOOK_ALLOW_CIDRS="0\.0\.0\.0\/0": 0\.0\.0\.0\/0: \/0 is broader than \/8/);
});

test.run();
