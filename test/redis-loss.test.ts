import { setTimeout as sleep } from 'node:timers/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hashKey } from '../src/keys/key-format.ts';
import { createLogger } from '../src/log.ts';
import { connectRedis } from '../src/redis.ts';
import { REDIS_BINARY, REDIS_SKIP_REASON, type RedisServer, startRedis } from '../tools/redis-server.ts';
import { claim, openInvite } from './helpers/claim.ts';
import { until } from './helpers/redis.ts';
import { send, startTestService, type TestService } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';

// Redis killed under traffic and started again on its port with nothing in it (no
// persistence, or a failover to an empty replica), beneath two replicas.

const lostCount = async (service: TestService, store: string) => {
  const text = (await send(`${service.adminUrl}/metrics`)).text;
  return Number(new RegExp(`^dqs_redis_data_lost_total\\{store="${store}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
};

if (!REDIS_BINARY) {
  skippedSuite('Redis restarted empty under traffic', REDIS_SKIP_REASON);
} else {
  const loss = suite('Redis restarted empty under traffic');
  let redis: RedisServer;
  let a: TestService;
  let b: TestService;
  loss.before(async () => {
    redis = await startRedis();
    // 250 ms, not the default 100: this shared 2-core machine runs both replicas and the traffic.
    const env = { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '250' };
    a = await startTestService({ env });
    b = await startTestService({ env, dataDir: a.dataDir });
  });
  loss.after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
  });

  loss('known keys answer 200 on both replicas throughout; a revoked key and closed invites stay closed after the write-back', async () => {
    const get = (service: TestService, key: string) => send(`${service.url}/v1/catalog`, { headers: { 'x-api-key': key } });
    const known = a.key;
    const revoked = (await b.admin('POST', '/keys', { client: 'revoked before the outage' })).json;
    for (const service of [a, b]) {
      assert.is((await get(service, known)).status, 200);
      assert.is((await get(service, revoked.key)).status, 200);
    }
    assert.is((await a.admin('POST', `/keys/${revoked.record.id}/revoke`)).status, 200);
    assert.ok(await until(async () => (await get(b, revoked.key)).status === 401, 1000), 'B refuses the revoked key');
    const open = (await a.admin('POST', '/invites', { client: 'open' })).json;
    const claimed = (await b.admin('POST', '/invites', { client: 'claimed' })).json;
    assert.is((await claim(claimed.url)).status, 200);
    const withdrawn = (await a.admin('POST', '/invites', { client: 'withdrawn' })).json;
    assert.is((await b.admin('POST', `/invites/${withdrawn.invite.id}/revoke`)).status, 200);

    // Steady traffic with the known key, two connections per replica, bounded in count and time.
    const answers: Array<{ status: number; at: number }> = [];
    let stop = false;
    const deadline = Date.now() + 30_000;
    const traffic = [a, b, a, b].map(async (service) => {
      for (let i = 0; i < 20_000 && !stop && Date.now() < deadline; i++)
        answers.push({ status: (await get(service, known)).status, at: Date.now() });
    });
    await sleep(500);
    const killedAt = Date.now();
    await redis.stop(); // SIGKILL
    await sleep(500);
    redis = await startRedis({ port: redis.port });
    const restartedAt = Date.now();
    const restored = await until(async () => (await lostCount(a, 'keys')) >= 1 && (await lostCount(b, 'keys')) >= 1, 5000);
    await sleep(1000);
    stop = true;
    await Promise.all(traffic);

    const refused = answers.filter((r) => r.status !== 200);
    assert.is(
      refused.length,
      0,
      `${refused.length} of ${answers.length} requests with the known key were not 200: ${[...new Set(refused.map((r) => r.status))]}`,
    );
    assert.ok(
      answers.some((r) => r.at > killedAt && r.at < restartedAt),
      'traffic ran while Redis was down',
    );
    assert.ok(answers.filter((r) => r.at > restartedAt + 1000).length > 10, 'traffic ran after the write-back');
    assert.ok(restored, 'both replicas counted the loss in dqs_redis_data_lost_total');

    for (const service of [a, b]) {
      assert.is((await get(service, known)).status, 200);
      assert.is((await get(service, revoked.key)).status, 401, 'the key revoked before the outage stays revoked');
      assert.ok(
        service.logs.some((l) => l.level === 50 && /^Redis lost its data .*writing this replica's API keys back/.test(l.msg)),
        'an error line says so',
      );
      assert.is(await lostCount(service, 'invites'), 1);
      assert.is((await openInvite(`${service.url}${new URL(open.url).pathname}`)).page.status, 200, 'the open invite still opens');
      assert.is(
        (await openInvite(`${service.url}${new URL(claimed.url).pathname}`)).page.status,
        410,
        'the claimed invite is not reopened',
      );
      assert.is(
        (await openInvite(`${service.url}${new URL(withdrawn.url).pathname}`)).page.status,
        410,
        'the revoked invite is not reopened',
      );
    }
    // What Redis holds now, as a replica started after the write-back would read it.
    const direct = await connectRedis(redis.url, 1000, createLogger('silent'));
    try {
      assert.ok(JSON.parse((await direct.hget('dqs:keys', hashKey(known)))!).revoked_at === null);
      assert.ok(JSON.parse((await direct.hget('dqs:keys', hashKey(revoked.key)))!).revoked_at !== null);
      assert.ok(await direct.get('dqs:generation'), 'a new generation marker');
    } finally {
      direct.disconnect();
    }
  });

  loss.run();
}
