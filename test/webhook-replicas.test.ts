import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../src/log.ts';
import { connectRedis } from '../src/redis.ts';
import { freePort } from '../tools/free-port.ts';
import { type RedisServer, startRedis } from '../tools/redis-server.ts';
import { until } from './helpers/redis.ts';
import { type Replica, startReplica } from './helpers/replica.ts';
import { FIXTURE_RELEASE, fixtureDataDir, publishNextMonth, send, tempDir } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';
import { LOOPBACK_WEBHOOKS, type Receiver, startReceiver, verified } from './helpers/webhook-receiver.ts';

// Two replicas behind haproxy sharing one redis-server, as deployed: a webhook goes out
// only once both serve the release, each endpoint gets each attempt once, and a replica
// killed while it sends an attempt is taken over by the other with the same webhook-id.

const missing = ['redis-server', 'haproxy'].filter((bin) => spawnSync('sh', ['-c', `command -v ${bin}`]).status !== 0);

async function startBalancer(work: string, replicas: readonly Replica[]): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const servers = replicas.map((r, i) => `  server r${i} ${new URL(r.url).host} check inter 500ms fall 2 rise 1`).join('\n');
  const config = `global\n  maxconn 256\ndefaults\n  mode http\n  timeout connect 2s\n  timeout client 30s\n  timeout server 30s\nfrontend api\n  bind 127.0.0.1:${port}\n  default_backend replicas\nbackend replicas\n  balance roundrobin\n${servers}\n`;
  const file = path.join(work, 'haproxy.cfg');
  await fs.writeFile(file, config);
  const child = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  assert.ok(
    await until(async () => (await send(`${url}/healthz`).catch(() => ({ status: 0 }))).status === 200, 30_000),
    'haproxy did not answer',
  );
  return { url, child };
}

if (missing.length) {
  skippedSuite('webhooks across replicas', `${missing.join(' and ')} not installed (apt-get install -y redis-server haproxy)`);
} else {
  const test = suite('webhooks across replicas');
  let redis: RedisServer;
  let work: string;
  let dataDir: string;
  let a: Replica;
  let b: Replica;
  let balancer: { url: string; child: ChildProcess };
  let key = '';
  let release = FIXTURE_RELEASE;
  /** What a subscriber who asks for the release at once got from each replica and through the balancer, per message. */
  const onArrival = new Map<string, number[]>();
  /** Holds the answer to a request while set (a receiver slow to answer). */
  let hold: Promise<void> | undefined;
  let receiver: Receiver;

  const publish = async () => {
    release = await publishNextMonth(dataDir, release);
    return { release, loaded: Date.now() };
  };
  const create = (url: string) =>
    send(`${balancer.url}/v1/webhooks`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ url }),
    });
  const deliveriesOf = (id: string) => receiver.received.filter((r) => r.body.includes(`"release":"${id}"`));

  test.before(async () => {
    redis = await startRedis();
    work = await tempDir('dqs-webhook-replicas-');
    dataDir = path.join(work, 'data');
    await fs.cp(await fixtureDataDir(), dataDir, { recursive: true });
    receiver = await startReceiver(async (request) => {
      const released = /"release":"(\d{4}-\d{2})"/.exec(request.body)?.[1];
      if (released && request.body.includes('release.published') && !onArrival.has(request.headers['webhook-id']!)) {
        const asked = `/v1/catalog?release=${released}`;
        const answers = await Promise.all(
          [a.url, b.url, balancer.url, balancer.url].map(
            async (base) => (await send(`${base}${asked}`, { headers: { 'x-api-key': key } })).status,
          ),
        );
        onArrival.set(request.headers['webhook-id']!, answers);
      }
      await hold;
    });
    const env = {
      REDIS_URL: redis.url,
      REDIS_TIMEOUT_MS: '1000',
      DATA_DIR: dataDir,
      STATE_DIR: path.join(work, 'state'),
      ...LOOPBACK_WEBHOOKS,
      WEBHOOK_RETRY_SCHEDULE: '2s,2s,2s',
    };
    // B reads DATA_DIR's pointer seldom: without the wait for every replica, A would send before B serves.
    a = await startReplica({ ...env, RELEASE_POLL_MS: '100' });
    b = await startReplica({ ...env, RELEASE_POLL_MS: '4000' });
    balancer = await startBalancer(work, [a, b]);
    const token = (await fs.readFile(path.join(work, 'state', 'admin-token'), 'utf8')).trim();
    const made = await send(`${a.adminUrl}/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ client: 'webhook-replicas' }),
    });
    key = made.json.key;
  });

  test.after(async () => {
    await Promise.all([a, b].filter(Boolean).map((r) => r.stop()));
    balancer?.child.kill('SIGTERM');
    await receiver?.close();
    await redis?.stop();
    await fs.rm(work, { recursive: true, force: true });
  });

  test('on arrival, release=<new> answers 200 on both replicas; each endpoint got the message once', async () => {
    const one = await create(`${receiver.url}/one`);
    const two = await create(`${receiver.url}/two`);
    assert.is(one.status, 201, one.text);
    assert.is(two.status, 201, two.text);
    const { release: published, loaded } = await publish();
    assert.ok(await until(() => deliveriesOf(published).length >= 2, 120_000), 'both endpoints got it');
    const first = Math.min(...deliveriesOf(published).map((r) => r.at));
    console.log(`webhook-replicas: etl load ended → first delivery, two replicas: ${first - loaded} ms`);
    await new Promise((resolve) => setTimeout(resolve, 1500)); // a duplicate would come within a tick or two
    const got = deliveriesOf(published);
    assert.equal(got.map((r) => r.path).sort(), ['/one', '/two']);
    assert.is(got[0]!.headers['webhook-id'], got[1]!.headers['webhook-id']);
    verified(one.json.secret, got.find((r) => r.path === '/one')!);
    for (const answers of onArrival.values()) assert.equal(answers, [200, 200, 200, 200]);
    for (const id of [one.json.id, two.json.id]) {
      await send(`${balancer.url}/v1/webhooks/${id}`, { method: 'DELETE', headers: { 'x-api-key': key } });
    }
  });

  test('a replica killed while it sends an attempt: the other makes it again, same webhook-id', async () => {
    const made = await create(`${receiver.url}/takeover`);
    assert.is(made.status, 201, made.text);
    receiver.script([{ status: 500 }], '/takeover');
    let release2 = () => {};
    const { release: published } = await publish();
    const attempts = () => deliveriesOf(published);
    assert.ok(await until(() => attempts().length === 1, 120_000), 'the first attempt');
    // The retry is held unanswered while its sender is found and killed.
    hold = new Promise<void>((resolve) => {
      release2 = resolve;
    });
    assert.ok(await until(() => attempts().length === 2, 30_000), 'the second attempt');
    const client = await connectRedis(redis.url, 1000, createLogger('silent'));
    const [lease] = await client.keys('dqs:webhooks:lease:*:2');
    const holder = await client.get(lease!);
    client.disconnect();
    const sender = [a, b].find((r) => holder?.endsWith(`:${r.pid}`))!;
    assert.ok(sender, `the lease holder ${holder} is one of the replicas`);
    await sender.stop('SIGKILL');
    hold = undefined;
    release2();
    const survivor = sender === a ? b : a;
    assert.ok(await until(() => attempts().length >= 3, 60_000), 'the survivor took the attempt over');
    const ids = new Set(attempts().map((r) => r.headers['webhook-id']));
    assert.is(ids.size, 1, [...ids].join());
    assert.ok(
      await until(() => survivor.logs.some((l) => l.msg === 'webhook attempt' && l.attempt === 2 && l.status_code === 200), 10_000),
      'the survivor logged the attempt answered 200',
    );
  });

  test('while Redis does not answer, /v1/webhooks is a 503 to retry, not a 500', async () => {
    const alive = [a, b].find((r) => r.child.exitCode === null && r.child.signalCode === null)!;
    // The key is checked first: asked once while Redis answers, this replica knows it.
    assert.is((await send(`${alive.url}/v1/webhooks`, { headers: { 'x-api-key': key } })).status, 200);
    redis.pause();
    try {
      const res = await send(`${alive.url}/v1/webhooks`, { headers: { 'x-api-key': key } });
      assert.is(res.status, 503, res.text);
      assert.equal(res.json, {
        error: 'Cannot read or change webhooks right now: their store (Redis) is not answering, so nothing was changed; try again shortly',
      });
      assert.is(res.headers['retry-after'], '5');
    } finally {
      redis.resume();
    }
  });

  test.run();
}
