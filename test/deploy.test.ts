import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../src/log.ts';
import { connectRedis } from '../src/redis.ts';
import { freePort } from '../tools/free-port.ts';
import { alive, descendants } from './helpers/processes.ts';
import { fixtureDataDir, send, tempDir } from './helpers/service.ts';
import { requiring } from './helpers/skip.ts';

// deploy/local-cluster.sh end to end: two replicas behind haproxy sharing one
// redis-server, driven through the balancer as clients use it.

const ROOT = path.resolve(import.meta.dirname, '..');
const missing = ['redis-server', 'haproxy', 'curl'].filter((bin) => spawnSync('sh', ['-c', `command -v ${bin}`]).status !== 0);
const PER_MINUTE = 30;

const run = requiring(
  test,
  missing.length ? `${missing.join(' and ')} not installed (apt-get install -y redis-server haproxy curl)` : undefined,
  'deploy.test.ts',
);

run('two replicas behind haproxy share keys, revocations, one rate-limit budget and one heavy-seconds budget', async () => {
  const [balancer, a, b, adminA, adminB, redis] = (await Promise.all(Array.from({ length: 6 }, freePort))) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const work = await tempDir('dqs-cluster-');
  const stateDir = path.join(work, 'state');
  const script = spawn('bash', ['deploy/local-cluster.sh'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(balancer),
      REPLICA_PORTS: `${a} ${b}`,
      ADMIN_PORTS: `${adminA} ${adminB}`,
      REDIS_PORT: String(redis),
      DATA_DIR: await fixtureDataDir(),
      STATE_DIR: stateDir,
      WORK: path.join(work, 'cluster'),
      RATE_LIMIT_PER_MINUTE: String(PER_MINUTE),
      // 50 ms of heavy work a key a minute: a few aggregates of the sample spend it.
      KEY_HEAVY_SECONDS_PER_MINUTE: '0.05',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => script.once('exit', resolve));
  let tree: number[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the cluster did not report ready in 180 s')), 180_000);
      script.once('exit', (code) => reject(new Error(`local-cluster.sh exited with ${code}`)));
      createInterface({ input: script.stdout! }).on('line', (line) => {
        if (line.includes('ready on')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    tree = await descendants(script.pid!);
    // Keys and invites live in Redis: it must keep them across its own restart.
    const redisClient = await connectRedis(`redis://127.0.0.1:${redis}`, 1000, createLogger('silent'));
    try {
      assert.equal(await redisClient.config('GET', 'appendonly'), ['appendonly', 'yes']);
    } finally {
      redisClient.disconnect();
    }
    const url = `http://127.0.0.1:${balancer}`;
    const token = (await fs.readFile(path.join(stateDir, 'admin-token'), 'utf8')).trim();
    const admin = (port: number, route: string, body?: unknown) =>
      send(`http://127.0.0.1:${port}${route}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body ?? {}),
      });

    // A key issued on replica A works through the balancer, so on both replicas.
    const created = await admin(adminA, '/keys', { client: 'cluster-test' });
    assert.is(created.status, 201, created.text);
    const key: string = created.json.key;
    const statuses: number[] = [];
    for (let i = 0; i < PER_MINUTE + 5; i++) statuses.push((await send(`${url}/v1/catalog`, { headers: { 'x-api-key': key } })).status);
    // One budget across both replicas: exactly PER_MINUTE admitted, whichever replica answered.
    assert.is(statuses.filter((s) => s === 200).length, PER_MINUTE, statuses.join(','));
    assert.is(statuses.filter((s) => s === 429).length, 5);
    // Log lines reach the file within the logger's 200 ms flush (docs/deploy.md).
    const servedBy = async () => {
      const logs = await Promise.all(['a', 'b'].map((n) => fs.readFile(path.join(work, 'cluster', `replica-${n}.log`), 'utf8')));
      return logs.map((log) => log.includes(`"key":"${created.json.record.id}"`));
    };
    let served = await servedBy();
    for (let wait = 0; wait < 20 && served.includes(false); wait++) {
      await new Promise((r) => setTimeout(r, 100));
      served = await servedBy();
    }
    for (const [i, ok] of served.entries()) assert.ok(ok, `replica ${'ab'[i]} served none of the requests`);

    // A second key, revoked on replica B: refused through the balancer on both replicas within 1 s.
    const other = (await admin(adminA, '/keys', { client: 'cluster-test-2' })).json;
    assert.is((await send(`${url}/v1/catalog`, { headers: { 'x-api-key': other.key } })).status, 200);
    assert.is((await admin(adminB, `/keys/${other.record.id}/revoke`)).status, 200);
    await new Promise((r) => setTimeout(r, 1000));
    for (let i = 0; i < 4; i++) {
      const res = await send(`${url}/v1/catalog`, { headers: { 'x-api-key': other.key } });
      assert.is(res.status, 401, `request ${i} after revocation: ${res.status}`);
    }

    // Heavy seconds are one budget too: spent on replica A alone, refused through the
    // balancer, so on B as well, which never ran one of this key's requests.
    const heavyKey: string = (await admin(adminA, '/keys', { client: 'cluster-heavy' })).json.key;
    const dims = ['region', 'country', 'product', 'channel', 'category', 'sub_channel', 'temporal', 'calculation'];
    const heavy = (i: number) =>
      `/v1/aggregate?metric=ggr&fx=USD&group_by=${dims[i % 8]},${dims[(i + 1 + Math.floor(i / 8)) % 8]},year&limit=5`;
    let i = 0;
    for (; i < 40; i++) if ((await send(`http://127.0.0.1:${a}${heavy(i)}`, { headers: { 'x-api-key': heavyKey } })).status === 429) break;
    assert.ok(i < 40, 'replica A refused the key within 40 aggregates');
    for (let j = 1; j <= 4; j++) {
      const res = await send(`${url}${heavy(i + j)}`, { headers: { 'x-api-key': heavyKey } });
      assert.is(res.status, 429, res.text);
      assert.match(res.json.error, /^Heavy request budget spent/);
      assert.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After');
    }

    script.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 20_000))]);
    assert.is.not(code, 'timeout', 'the script stops on SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(tree.filter(alive), [], 'every process the script started has stopped');
  } finally {
    for (const pid of [...tree, script.pid!]) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await fs.rm(work, { recursive: true, force: true });
  }
});

test.run();
