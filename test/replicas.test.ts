import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { REDIS_BINARY, REDIS_SKIP_REASON, type RedisServer, startRedis } from '../tools/redis-server.ts';
import { openInvite, postClaim, shownKey } from './helpers/claim.ts';
import { SERVER_ARGS } from './helpers/processes.ts';
import { type Replica, startReplica } from './helpers/replica.ts';
import { fixtureDataDir, send, tempDir } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';

// Two replicas as deployed: separate `node dist/main.js` processes sharing one
// redis-server and one STATE_DIR, with the spec's default limits.

const ROOT = path.resolve(import.meta.dirname, '..');
const TOO_MANY = 'Too many requests — please try again later';
const TIMEOUT_MS = 250;

const start = suite('REDIS_URL at start');
start('a Redis that cannot be reached stops the start with one line naming REDIS_URL', async () => {
  const stateDir = await tempDir();
  const child = spawn(process.execPath, [...SERVER_ARGS], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      ADMIN_PORT: '0',
      STATE_DIR: stateDir,
      DATA_DIR: await fixtureDataDir(),
      REDIS_URL: 'redis://127.0.0.1:1',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: any[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => lines.push(JSON.parse(line)));
  const [code] = await once(child, 'exit');
  await fs.rm(stateDir, { recursive: true, force: true });
  assert.is(code, 1);
  const fatal = lines.find((l) => l.level === 60);
  assert.match(
    fatal?.msg ?? '',
    /cannot start: REDIS_URL=redis:\/\/127\.0\.0\.1:1: cannot connect \(connect ECONNREFUSED .*\); start Redis or fix REDIS_URL/,
  );
});
start.run();

if (!REDIS_BINARY) {
  skippedSuite('replicas sharing Redis', REDIS_SKIP_REASON);
} else {
  const replicas = suite('replicas sharing Redis');
  let redis: RedisServer;
  let stateDir: string;
  let a: Replica;
  let b: Replica;
  let token = '';
  replicas.before(async () => {
    redis = await startRedis();
    stateDir = await tempDir();
    // 250 ms, not the default 100: during the 150-request burst on a shared 2-core
    // machine a reply can wait longer than 100 ms for the event loop, and a timed-out
    // call fails open by design; the burst case is about atomicity, not this machine.
    // 50 ms of heavy work a key a minute: a few aggregates of the sample spend it.
    const env = {
      REDIS_URL: redis.url,
      REDIS_TIMEOUT_MS: String(TIMEOUT_MS),
      DATA_DIR: await fixtureDataDir(),
      STATE_DIR: stateDir,
      KEY_HEAVY_SECONDS_PER_MINUTE: '0.05',
    };
    a = await startReplica(env); // first, so it alone creates the shared secrets
    b = await startReplica(env);
    token = (await fs.readFile(path.join(stateDir, 'admin-token'), 'utf8')).trim();
  });
  replicas.after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
    await fs.rm(stateDir, { recursive: true, force: true });
  });

  const admin = (replica: Replica, method: string, pathName: string, body?: unknown) =>
    send(`${replica.adminUrl}${pathName}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const get = (replica: Replica, key: string | null, pathName = '/v1/catalog') =>
    send(`${replica.url}${pathName}`, { headers: key === null ? {} : { 'x-api-key': key } });

  replicas('a key made on A works on B at once; a revocation on A refuses on B within 1 s', async () => {
    const created = (await admin(a, 'POST', '/keys', { client: 'shared' })).json;
    assert.is((await get(b, created.key)).status, 200);
    await admin(a, 'POST', `/keys/${created.record.id}/revoke`);
    const revokedAt = Date.now();
    for (;;) {
      const res = await get(b, created.key);
      if (res.status === 401) break;
      assert.ok(Date.now() - revokedAt < 1000, `B still serves the revoked key after ${Date.now() - revokedAt} ms`);
    }
  });

  replicas('50 simultaneous claims of one invite across both replicas: exactly one key', async () => {
    const created = await admin(a, 'POST', '/invites', { client: 'raced' });
    assert.is(created.status, 201, created.text);
    const form = await openInvite(created.json.url);
    assert.is(form.page.status, 200);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => postClaim(`${(i % 2 ? b : a).url}${new URL(created.json.url).pathname}`, form)),
    );
    assert.is(results.filter((r) => r.status === 200).length, 1, results.map((r) => r.status).join(','));
    assert.is(results.filter((r) => r.status === 410).length, 49);
    const keys = (await admin(b, 'GET', '/keys')).json.keys.filter((k: { invite_id?: string }) => k.invite_id === created.json.invite.id);
    assert.is(keys.length, 1);
    assert.is((await get(b, shownKey(results.find((r) => r.status === 200)!.text)!)).status, 200);
  });

  replicas('150 concurrent requests on one key across both: exactly 100 admitted', async () => {
    const { key } = (await admin(b, 'POST', '/keys', { client: 'burst' })).json;
    const results = await Promise.all(Array.from({ length: 150 }, (_, i) => get(i % 2 ? a : b, key)));
    const failedOpen = [...a.logs, ...b.logs].filter((l) => /fail open/.test(l.msg ?? ''));
    assert.equal(failedOpen, [], 'Redis answered every call within the timeout');
    assert.is(results.filter((r) => r.status === 200).length, 100);
    const refused = results.filter((r) => r.status === 429);
    assert.is(refused.length, 50);
    for (const r of refused) {
      assert.is(r.json.error, TOO_MANY);
      assert.is(r.headers['retry-after'], String(r.json.retryAfterSeconds));
      assert.is(r.headers['x-ratelimit-remaining'], '0');
    }
    // Both replicas saw part of the burst: the budget is shared, not per process.
    assert.ok(results.some((r, i) => i % 2 === 1 && r.status === 200) && results.some((r, i) => i % 2 === 0 && r.status === 200));
  });

  replicas(
    "one key's heavy seconds are one budget across both; with Redis not answering, each replica counts its own, never a 5xx",
    async () => {
      const { key } = (await admin(a, 'POST', '/keys', { client: 'heavy' })).json;
      const dims = ['region', 'country', 'product', 'channel', 'category', 'sub_channel', 'temporal', 'calculation'];
      // Each a different pair of dimensions: a result of its own, never a page of a kept one.
      const heavy = (i: number) =>
        `/v1/aggregate?metric=ggr&fx=USD&group_by=${dims[i % 8]},${dims[(i + 1 + Math.floor(i / 8)) % 8]},year&limit=5`;
      let i = 0;
      for (; i < 40; i++) if ((await get(a, key, heavy(i))).status === 429) break;
      assert.ok(i < 40, 'A refused the key within 40 aggregates');
      // B has run none of them, and refuses the key's next one: the budget is shared.
      const onB = await get(b, key, heavy(i + 1));
      assert.is(onB.status, 429, onB.text);
      assert.match(onB.json.error, /^Heavy request budget spent/);
      redis.pause();
      try {
        // B counts alone now, and has charged nothing itself: served, not a 5xx.
        const outage = await get(b, key, heavy(i + 2));
        assert.is(outage.status, 200, outage.text);
      } finally {
        redis.resume();
      }
    },
  );

  replicas('Redis stopped, then killed: requests answer within the timeout as documented, never 500', async () => {
    const { key } = (await admin(a, 'POST', '/keys', { client: 'outage' })).json;
    assert.is((await get(a, key)).status, 200);
    assert.is((await get(b, key)).status, 200);
    const outage = async (what: string) => {
      const before = a.logs.length;
      let started = performance.now();
      const known = await get(a, key);
      const knownMs = performance.now() - started;
      started = performance.now();
      const unknown = await get(a, `sk_live_${'q'.repeat(40)}`);
      const unknownMs = performance.now() - started;
      // Limits fail open: the known key is served, uncounted.
      assert.is(known.status, 200, what);
      assert.is(known.headers['x-ratelimit-remaining'], '100', what);
      // A key this replica cannot check is a 503, not a guess.
      assert.is(unknown.status, 503, what);
      assert.equal(unknown.json, { error: 'Cannot verify the API key right now: please try again shortly' });
      // One Redis call at most, bounded by the timeout; the rest is slack for a shared machine.
      assert.ok(
        knownMs < TIMEOUT_MS + 500 && unknownMs < TIMEOUT_MS + 500,
        `${what}: ${knownMs.toFixed(0)} ms / ${unknownMs.toFixed(0)} ms`,
      );
      return a.logs.slice(before);
    };
    redis.pause();
    try {
      const logs = await outage('Redis not answering');
      assert.ok(
        logs.some((l) => l.level === 50 && /fail open/.test(l.msg)),
        'an error line says the limiter failed open',
      );
    } finally {
      redis.resume();
    }
    await redis.stop();
    await outage('Redis gone');
    assert.is((await get(b, key)).status, 200, 'the other replica, which had seen the key, too');
    // The admin listener says Redis is the cause, and that nothing changed: the key is not revoked.
    const adminCalls = [
      admin(a, 'POST', '/keys', { client: 'during the outage' }),
      admin(a, 'POST', '/keys/revoke', { ref: key }),
      admin(b, 'GET', '/keys'),
      admin(b, 'POST', '/invites', { client: 'during the outage' }),
    ];
    for (const res of await Promise.all(adminCalls)) {
      assert.is(res.status, 503, res.text);
      assert.match(res.json.error, /^Redis \(REDIS_URL\) is not answering, so nothing was changed/);
      assert.is(res.headers['retry-after'], '5');
    }
    assert.is((await get(a, key)).status, 200, 'the key still works');
  });

  replicas.run();
}
