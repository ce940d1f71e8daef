import fs from 'node:fs/promises';
import * as assert from 'uvu/assert';
import { FileWebhookStore } from '../src/webhooks/file-store.ts';
import { RedisWebhookStore } from '../src/webhooks/redis-store.ts';
import { DELIVERY_LOG_MS, type Endpoint, type WebhookStore } from '../src/webhooks/store.ts';
import { REDIS_BINARY, REDIS_SKIP_REASON } from '../tools/redis-server.ts';
import { type ContractBackend, contractSuite } from './helpers/contract.ts';
import { redisWithClients } from './helpers/redis.ts';
import { tempDir } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';

// One contract for every WebhookStore: what a restart must keep (endpoints, attempts to
// make, the log), the cursor and leases that let one replica queue and send each attempt.

interface Backend extends ContractBackend<WebhookStore> {
  /** Whether two stores may serve one backend at once (replicas); the file store is one process's. */
  shared: boolean;
}

const endpoint = (id: string, keyId = 'key_1'): Endpoint => ({
  id,
  key_id: keyId,
  url: `https://example.com/${id}`,
  events: ['release.published'],
  secrets: [{ secret: 'whsec_AAAA', expires_at: null }],
  enabled: true,
  disabled_reason: null,
  created_at: new Date(0).toISOString(),
  exhausted_in_row: 0,
});

function webhookStoreContract(name: string, backend: Backend) {
  const { test, open } = contractSuite(`webhook store contract: ${name}`, backend);

  test('endpoints, attempts to make and the log survive a reopen (a restart)', async () => {
    const store = await open();
    await store.put(endpoint('wh_a'));
    await store.put(endpoint('wh_b', 'key_2'));
    await store.schedule({ endpoint_id: 'wh_a', seq: 3, attempt: 2, due_at: 1000, serves: '2026-12', queued_at: 5 });
    await store.record('wh_a', {
      at: new Date(2000).toISOString(),
      msg_id: 'msg_3',
      attempt: 1,
      status_code: 500,
      duration_ms: 4,
      error: 'answered 500',
    });
    await store.close();
    const again = await open();
    assert.equal(
      (await again.list('key_1')).map((e) => e.id),
      ['wh_a'],
    );
    assert.equal((await again.get('wh_b'))?.key_id, 'key_2');
    assert.equal(await again.pending(), [{ endpoint_id: 'wh_a', seq: 3, attempt: 2, due_at: 1000, serves: '2026-12', queued_at: 5 }]);
    assert.equal(
      (await again.deliveries('wh_a', 3000)).map((d) => d.msg_id),
      ['msg_3'],
    );
  });

  test('an attempt to make is one per (endpoint, message): a retry replaces it, unschedule drops it; remove drops all of an endpoint', async () => {
    const store = await open();
    await store.put(endpoint('wh_a'));
    await store.schedule({ endpoint_id: 'wh_a', seq: 3, attempt: 1, due_at: 0, serves: null, queued_at: 0 });
    await store.schedule({ endpoint_id: 'wh_a', seq: 3, attempt: 2, due_at: 10, serves: null, queued_at: 0 });
    await store.schedule({ endpoint_id: 'wh_a', seq: 4, attempt: 1, due_at: 0, serves: null, queued_at: 0 });
    assert.equal((await store.pending()).map((p) => `${p.seq}:${p.attempt}`).sort(), ['3:2', '4:1']);
    await store.unschedule('wh_a', 4);
    assert.equal(
      (await store.pending()).map((p) => p.seq),
      [3],
    );
    await store.record('wh_a', {
      at: new Date(0).toISOString(),
      msg_id: 'msg_3',
      attempt: 1,
      status_code: null,
      duration_ms: 0,
      error: 'x',
    });
    await store.remove('wh_a');
    assert.is(await store.get('wh_a'), undefined);
    assert.equal(await store.pending(), []);
    assert.equal(await store.deliveries('wh_a', 0), []);
  });

  test('the log is newest first and keeps 35 days', async () => {
    const store = await open();
    const now = Date.parse('2026-12-31T00:00:00Z');
    for (const [i, ago] of [DELIVERY_LOG_MS + 1000, 3000, 1000].entries())
      await store.record('wh_a', {
        at: new Date(now - ago).toISOString(),
        msg_id: `msg_${i + 1}`,
        attempt: 1,
        status_code: 200,
        duration_ms: 1,
        error: null,
      });
    assert.equal(
      (await store.deliveries('wh_a', now)).map((d) => d.msg_id),
      ['msg_3', 'msg_2'],
    );
  });

  test('the cursor starts unset and only moves forward, once per seq', async () => {
    const a = await open();
    const b = backend.shared ? await open() : a;
    assert.is(await a.cursor(), undefined);
    assert.ok(await a.advance(2));
    assert.not.ok(await b.advance(2), 'a second caller does not queue seq 2 again');
    assert.not.ok(await b.advance(1));
    assert.ok(await b.advance(3));
    assert.is(await a.cursor(), 3);
  });

  if (backend.shared)
    test('a lease has one holder until it lapses', async () => {
      const a = await open();
      const b = await open();
      assert.ok(await a.lease('wh_a:3:1', 200));
      assert.not.ok(await b.lease('wh_a:3:1', 200));
      assert.ok(await b.lease('wh_a:3:2', 200), 'another attempt is another lease');
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.ok(await b.lease('wh_a:3:1', 200), 'a holder that died lets go when its lease lapses');
    });

  test.run();
}

let stateDir = '';
webhookStoreContract('file', {
  shared: false,
  open: () => FileWebhookStore.open(stateDir),
  async reset() {
    if (stateDir) await fs.rm(stateDir, { recursive: true, force: true });
    stateDir = await tempDir();
  },
  after: () => fs.rm(stateDir, { recursive: true, force: true }),
});

if (REDIS_BINARY) {
  let fixture: Awaited<ReturnType<typeof redisWithClients>>;
  webhookStoreContract('redis', {
    shared: true,
    open: async () => new RedisWebhookStore(fixture.clients[0]!),
    reset: async () => void (await fixture.clients[0]!.flushall()),
    before: async () => {
      fixture = await redisWithClients(1, 1000);
    },
    after: () => fixture.stop(),
  });
} else skippedSuite('webhook store contract: redis', REDIS_SKIP_REASON);
