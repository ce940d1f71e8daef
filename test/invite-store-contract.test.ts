import fs from 'node:fs/promises';
import type { Redis } from 'ioredis';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FileInviteStore } from '../src/invites/file-store.ts';
import { RedisInviteStore } from '../src/invites/redis-store.ts';
import { hashToken, type InviteStore, inviteStatus } from '../src/invites/store.ts';
import { createLogger } from '../src/log.ts';
import { REDIS_BINARY, REDIS_SKIP_REASON } from '../tools/redis-server.ts';
import { type ContractBackend, contractSuite } from './helpers/contract.ts';
import { reconnect, redisWithClients, until } from './helpers/redis.ts';
import { tempDir } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';

// One contract for every InviteStore, like test/key-store-contract.test.ts.
// `open` gives a store over the backend's current state; `views` two stores that
// serve one deployment (two replicas' connections for Redis; for the single-process
// file store, the one store); `reset` empties it. Time is injected: NOW below.

interface Backend extends ContractBackend<InviteStore> {
  views(): Promise<[InviteStore, InviteStore]>;
}

const HOUR = 3_600_000;
const NOW = Date.parse('2026-11-22T12:00:00Z');
const DAY = 86_400_000;
const invite = (client: string, replaces: string | null = null) => ({ client, expiresAt: NOW + 7 * DAY, replaces });

function inviteStoreContract(name: string, backend: Backend) {
  const { test, open, track } = contractSuite(`invite store contract: ${name}`, backend);

  test('create returns a long random token once; only its hash is kept', async () => {
    const store = await open();
    const { token, record } = await store.create(invite('Acme', 'key_0123456789abcdef'), NOW);
    const other = await store.create(invite('Acme'), NOW);
    assert.match(token, /^invtok_[A-Za-z0-9_-]{43}$/);
    assert.is.not(token, other.token);
    assert.match(record.id, /^inv_[0-9a-f]{16}$/);
    assert.is(record.hash, hashToken(token));
    assert.is(record.replaces, 'key_0123456789abcdef');
    assert.is(record.expires_at, new Date(NOW + 7 * DAY).toISOString());
    assert.equal(await store.find(token), record);
    const listed = await store.list();
    assert.is(listed.length, 2);
    assert.not.ok(JSON.stringify(listed).includes(token.slice(7)));
  });

  test('a token spends once: the claim is recorded, then settled with its key; a second spend says claimed', async () => {
    const store = await open();
    const { token } = await store.create(invite('Acme'), NOW);
    const first = await store.spend(token, NOW + 1000);
    assert.ok(first.ok);
    assert.is(first.record.claimed_at, new Date(NOW + 1000).toISOString());
    await store.settle(first.record, 'key_0000000000000001');
    assert.equal(await store.spend(token, NOW + 2000), { ok: false, status: 'claimed' });
    const found = (await (await open()).find(token))!;
    assert.is(found.key_id, 'key_0000000000000001');
    assert.is(inviteStatus(found, NOW), 'claimed');
  });

  test('50 simultaneous spends of one token: exactly one wins, across two views of the store', async () => {
    const [a, b] = await backend.views();
    track(a);
    track(b);
    const { token } = await a.create(invite('Race'), NOW);
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? b : a).spend(token, NOW)));
    assert.is(results.filter((r) => r.ok).length, 1);
    assert.ok(results.every((r) => r.ok || r.status === 'claimed'));
  });

  test('expiry follows the injected clock; unknown tokens say unknown', async () => {
    const store = await open();
    const { token } = await store.create({ client: 'Late', expiresAt: NOW + DAY, replaces: null }, NOW);
    assert.equal(await store.spend(token, NOW + DAY), { ok: false, status: 'expired' });
    assert.equal(await store.spend(`inv_${'a'.repeat(43)}`, NOW), { ok: false, status: 'unknown' });
    assert.is(await store.find(`inv_${'a'.repeat(43)}`), undefined);
    assert.ok((await store.spend(token, NOW + DAY - 1)).ok);
  });

  test('a released claim can be spent again (its key could not be made)', async () => {
    const store = await open();
    const { token } = await store.create(invite('Retry'), NOW);
    const spent = await store.spend(token, NOW);
    assert.ok(spent.ok);
    await store.release(spent.record);
    assert.ok((await store.spend(token, NOW)).ok);
  });

  test('revoke closes an open invite for good; a claimed one stays claimed; unknown ids give undefined', async () => {
    const store = await open();
    const open1 = await store.create(invite('Open'), NOW);
    const claimed = await store.create(invite('Claimed'), NOW);
    assert.ok((await store.spend(claimed.token, NOW)).ok);
    const revoked = await store.revoke(open1.record.id, NOW + 5);
    assert.is(revoked?.revoked_at, new Date(NOW + 5).toISOString());
    assert.equal(await store.spend(open1.token, NOW + 6), { ok: false, status: 'revoked' });
    assert.is(inviteStatus((await store.revoke(claimed.record.id, NOW))!, NOW), 'claimed');
    assert.is(await store.revoke('inv_0000000000000000', NOW), undefined);
  });

  test('invites and their states survive reopening the store', async () => {
    const first = await open();
    const kept = await first.create(invite('Kept'), NOW);
    const spent = await first.create(invite('Spent'), NOW);
    assert.ok((await first.spend(spent.token, NOW)).ok);
    await first.close();
    const second = await open();
    assert.ok((await second.spend(kept.token, NOW)).ok);
    assert.equal(await second.spend(spent.token, NOW), { ok: false, status: 'claimed' });
  });

  test.run();
}

let stateDir = '';
inviteStoreContract('file', {
  open: () => FileInviteStore.open(stateDir),
  async views() {
    const store = await FileInviteStore.open(stateDir);
    return [store, store];
  },
  async reset() {
    if (stateDir) await fs.rm(stateDir, { recursive: true, force: true });
    stateDir = await tempDir();
  },
  after: () => fs.rm(stateDir, { recursive: true, force: true }),
});

if (REDIS_BINARY) {
  const log = createLogger('silent');
  let fixture: Awaited<ReturnType<typeof redisWithClients>>;
  inviteStoreContract('redis', {
    open: () => RedisInviteStore.open(fixture.clients[0]!, log),
    views: async () => [await RedisInviteStore.open(fixture.clients[0]!, log), await RedisInviteStore.open(fixture.clients[1]!, log)],
    reset: async () => void (await fixture.clients[0]!.flushall()),
    before: async () => {
      fixture = await redisWithClients(2, 1000);
    },
    after: () => fixture.stop(),
  });

  const lost = suite('redis invite store: Redis emptied');
  lost.before(async () => {
    fixture = await redisWithClients(2, 1000);
  });
  lost.after(() => fixture.stop());

  lost('each replica writes its copy back; a claim or revocation either copy holds wins, whichever writes first', async () => {
    const [a, b] = fixture.clients as [Redis, Redis];
    for (const first of ['stale', 'closing'] as const) {
      await a.flushall();
      // No polls: each copy changes only by its own writes, and checks Redis when its connection is made again.
      const [closing, stale] = [
        await RedisInviteStore.open(a, log, { refreshMs: HOUR }),
        await RedisInviteStore.open(b, log, { refreshMs: HOUR }),
      ];
      try {
        const open = await closing.create(invite('Open'), NOW);
        const claimed = await closing.create(invite('Claimed'), NOW);
        const revoked = await closing.create(invite('Revoked'), NOW);
        await reconnect(b); // the stale copy reloads: all three open
        assert.ok(await until(async () => (await stale.list()).length === 3, 1000));
        const spent = await closing.spend(claimed.token, NOW);
        assert.ok(spent.ok);
        await closing.settle(spent.record, 'key_0000000000000001');
        await closing.revoke(revoked.record.id, NOW);
        await a.flushall();
        assert.is(await stale.find(open.token), undefined, 'Redis is empty');
        for (const [i, client] of (first === 'stale' ? [b, a] : [a, b]).entries()) {
          await reconnect(client);
          assert.ok(await until(async () => Number(await a.get('dqs:invites:version')) === i + 1, 2000), `write-back ${i + 1}`);
        }
        for (const store of [closing, stale]) {
          assert.ok((await store.spend(open.token, NOW + 1)).ok, `${first} first: the open invite can be claimed`);
          assert.equal(await store.spend(claimed.token, NOW + 1), { ok: false, status: 'claimed' }, `${first} first: the claim stands`);
          assert.equal(
            await store.spend(revoked.token, NOW + 1),
            { ok: false, status: 'revoked' },
            `${first} first: the revocation stands`,
          );
          await store.release((await store.find(open.token))!);
        }
        assert.is((await stale.find(claimed.token))?.key_id, 'key_0000000000000001', 'the settled claim keeps its key');
      } finally {
        await Promise.all([closing.close(), stale.close()]);
      }
    }
  });
  lost.run();
} else {
  skippedSuite('invite store contract: redis', REDIS_SKIP_REASON);
}
