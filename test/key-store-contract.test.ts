import fs from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FileKeyStore } from '../src/keys/file-store.ts';
import { RedisKeyStore } from '../src/keys/redis-store.ts';
import type { KeyStore } from '../src/keys/store.ts';
import { createLogger } from '../src/log.ts';
import { REDIS_BINARY, REDIS_SKIP_REASON } from '../tools/redis-server.ts';
import { type ContractBackend, contractSuite } from './helpers/contract.ts';
import { reconnect, redisWithClients, until } from './helpers/redis.ts';
import { tempDir } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';

// One contract for every KeyStore (undici's cacheStoreTests(Store) pattern).
// `open` gives a store over the backend's current state; `reset` empties it.

interface Backend extends ContractBackend<KeyStore> {
  /** Makes the next writes fail; the returned function repairs the backend. */
  breakWrites(): Promise<() => Promise<void>>;
  /** Whether two stores may serve one backend at once (replicas); the file store is one process's. */
  shared: boolean;
}

function keyStoreContract(name: string, backend: Backend) {
  const { test, open } = contractSuite(`key store contract: ${name}`, backend);

  test('create returns the key once; verify finds its record; nothing stored holds the key', async () => {
    const store = await open();
    const { key, record } = await store.create('Acme');
    assert.match(key, /^sk_live_[0-9A-Za-z]{40}$/);
    assert.match(record.id, /^key_[0-9a-f]{16}$/);
    assert.is(record.prefix, key.slice(0, 12));
    assert.is(record.client, 'Acme');
    assert.is(record.revoked_at, null);
    assert.equal(await store.verify(key), record);
    assert.equal(await store.known(key), record, 'known to the replica that made it');
    const listed = await store.list();
    assert.equal(listed, [{ ...record, last_used_at: null }]);
    assert.not.ok(JSON.stringify(listed).includes(key.slice(8)));
  });

  test('unknown keys verify to undefined', async () => {
    const store = await open();
    await store.create('someone');
    assert.is(await store.verify(`sk_live_${'a'.repeat(40)}`), undefined);
    assert.is(await store.known(`sk_live_${'a'.repeat(40)}`), undefined);
  });

  test('revoke by id or by key: verify refuses at once, list keeps the record; twice changes nothing', async () => {
    const store = await open();
    for (const by of ['id', 'key'] as const) {
      const { key, record } = await store.create(`by-${by}`);
      const revoked = await store.revoke(by === 'id' ? record.id : key);
      assert.ok(revoked?.revoked_at);
      assert.is(await store.verify(key), undefined);
      assert.is(await store.known(key), undefined);
      assert.equal(await store.revoke(record.id), revoked, 'revoking again returns the first revocation');
      assert.equal(
        (await store.list()).find((r) => r.id === record.id),
        { ...revoked, last_used_at: null },
      );
    }
    assert.is(await store.revoke('key_0000000000000000'), undefined);
    assert.is(await store.revoke(`sk_live_${'b'.repeat(40)}`), undefined);
  });

  test('a create that fails returns no key and leaves none behind', async () => {
    const store = await open();
    const kept = await store.create('before');
    const repair = await backend.breakWrites();
    try {
      await store.create('lost').then(
        () => assert.unreachable('create succeeded with writes broken'),
        () => {},
      );
    } finally {
      await repair();
    }
    assert.equal(
      (await store.list()).map((r) => r.client),
      ['before'],
    );
    const reopened = await open();
    assert.equal(
      (await reopened.list()).map((r) => r.client),
      ['before'],
    );
    assert.ok(await reopened.verify(kept.key));
  });

  test('40 concurrent creates: each returns its key, and exactly those keys are kept', async () => {
    const store = await open();
    const created = await Promise.all(Array.from({ length: 40 }, (_, i) => store.create(`burst-${i}`)));
    const reopened = await open();
    assert.is((await reopened.list()).length, 40);
    for (const { key, record } of created) assert.equal(await reopened.verify(key), record);
  });

  test('a use shows in list() at once and survives reopening; the newest use wins across stores', async () => {
    const a = await open();
    const b = backend.shared ? await open() : a;
    const { record } = await a.create('busy');
    const at = Date.parse('2026-11-22T12:00:00Z');
    a.recordUse(record.id, at + 2000);
    a.recordUse(record.id, at + 1000);
    b.recordUse(record.id, at + 500);
    assert.is((await a.list())[0]!.last_used_at, new Date(at + 2000).toISOString());
    await Promise.all([a.close(), b.close()]);
    const reopened = await open();
    assert.is((await reopened.list())[0]!.last_used_at, new Date(at + 2000).toISOString());
  });

  test('keys and revocations survive reopening the store', async () => {
    const first = await open();
    const kept = await first.create('kept');
    const gone = await first.create('gone');
    await first.revoke(gone.record.id);
    await first.close();
    const second = await open();
    assert.equal(await second.verify(kept.key), kept.record);
    assert.is(await second.verify(gone.key), undefined);
    assert.is((await second.list()).length, 2);
  });

  test.run();
}

let stateDir = '';
keyStoreContract('file', {
  shared: false,
  open: () => FileKeyStore.open(stateDir),
  async reset() {
    if (stateDir) await fs.rm(stateDir, { recursive: true, force: true });
    stateDir = await tempDir();
  },
  after: () => fs.rm(stateDir, { recursive: true, force: true }),
  async breakWrites() {
    // The store renames a fresh temporary file over keys.json: a non-empty directory
    // in its place makes that fail (permissions would not stop root).
    const file = path.join(stateDir, 'keys.json');
    await fs.rename(file, `${file}.aside`);
    await fs.mkdir(file);
    await fs.writeFile(path.join(file, 'blocker'), '');
    return async () => {
      await fs.rm(file, { recursive: true });
      await fs.rename(`${file}.aside`, file);
    };
  },
});

if (REDIS_BINARY) {
  let fixture: Awaited<ReturnType<typeof redisWithClients>>;
  const log = createLogger('silent');
  keyStoreContract('redis', {
    shared: true,
    open: () => RedisKeyStore.open(fixture.clients[0]!, log),
    reset: async () => void (await fixture.clients[0]!.flushall()),
    // Redis stopped: the write times out, so the store cannot know whether it landed.
    async breakWrites() {
      fixture.server.pause();
      return async () => fixture.server.resume();
    },
    before: async () => {
      fixture = await redisWithClients(1, 1000);
    },
    after: () => fixture.stop(),
  });

  const HOUR = 3_600_000;
  const shared = suite('redis key store: replicas');
  let a: Redis;
  let b: Redis;
  shared.before(async () => {
    // Two replicas' connections, with the default REDIS_TIMEOUT_MS.
    fixture = await redisWithClients(2, 100);
    [a, b] = fixture.clients as [Redis, Redis];
  });
  shared.after(() => fixture.stop());

  shared('a key made on one replica works on another at once; a revocation reaches it within 1 s', async () => {
    const [storeA, storeB] = [await RedisKeyStore.open(a, log), await RedisKeyStore.open(b, log)];
    try {
      const { key, record } = await storeA.create('shared');
      assert.equal(await storeB.verify(key), record, 'not yet in B’s copy: looked up directly');
      const started = Date.now();
      await storeA.revoke(record.id);
      while ((await storeB.verify(key)) !== undefined) {
        assert.ok(Date.now() - started < 1000, 'B still accepts the key 1 s after the revocation');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      await Promise.all([storeA.close(), storeB.close()]);
    }
  });

  shared('known() answers from the replica’s copy only: a key made elsewhere is known once a lookup or a refresh brings it', async () => {
    // B refreshes its copy once a minute: only its own lookup can bring the key within this test.
    const [storeA, storeB] = [await RedisKeyStore.open(a, log), await RedisKeyStore.open(b, log, { refreshMs: 60_000 })];
    try {
      const { key, record } = await storeA.create('elsewhere');
      assert.is(await storeB.known(key), undefined, 'known() asked Redis');
      assert.equal(await storeB.verify(key), record);
      assert.equal(await storeB.known(key), record, 'the lookup keeps the record in the copy');
    } finally {
      await Promise.all([storeA.close(), storeB.close()]);
    }
  });

  shared('Redis unreachable: known keys keep working from the copy, an unseen key rejects (the caller answers 503)', async () => {
    const store = await RedisKeyStore.open(a, log);
    const { key } = await store.create('known');
    await store.verify(key);
    const other = await RedisKeyStore.open(b, log);
    const unseen = (await other.create('unseen')).key;
    await other.close();
    fixture.server.pause();
    try {
      const started = Date.now();
      assert.ok(await store.verify(key));
      await store.verify(unseen).then(
        () => assert.unreachable('an unseen key cannot be verified without Redis'),
        (err: Error) => assert.match(err.message, /timed out/i),
      );
      // 100 ms of timeout plus slack for a busy shared machine; without the bound it
      // would wait until Redis resumes.
      assert.ok(Date.now() - started < 600, `took ${Date.now() - started} ms`);
    } finally {
      fixture.server.resume();
      await store.close();
    }
  });
  shared('Redis emptied: each replica writes its copy back, and a revocation either copy holds wins, whichever writes first', async () => {
    for (const first of ['stale', 'revoking'] as const) {
      await a.flushall();
      // No polls: each copy changes only by its own writes, and checks Redis when its connection is made again.
      const [revoking, stale] = [
        await RedisKeyStore.open(a, log, { refreshMs: HOUR }),
        await RedisKeyStore.open(b, log, { refreshMs: HOUR }),
      ];
      try {
        const kept = await revoking.create('kept');
        const gone = await revoking.create('gone');
        assert.ok((await stale.verify(kept.key)) && (await stale.verify(gone.key)), 'both keys are in the stale copy');
        await revoking.revoke(gone.record.id);
        assert.ok(await stale.verify(gone.key), 'the stale copy has not seen the revocation');
        await a.flushall();
        assert.ok(await stale.verify(kept.key), 'known keys work from the copy while Redis is empty');
        // Each write-back bumps the emptied version counter: 1, then 2.
        for (const [i, client] of (first === 'stale' ? [b, a] : [a, b]).entries()) {
          await reconnect(client);
          assert.ok(
            await until(async () => Number(await a.get('dqs:keys:version')) === i + 1, 2000),
            `write-back ${i + 1} by the ${i === 0 ? first : 'other'} copy`,
          );
        }
        const stored = (id: string) =>
          a.hget('dqs:keys', id === kept.record.id ? kept.record.hash : gone.record.hash).then((t) => JSON.parse(t!));
        assert.is((await stored(kept.record.id)).revoked_at, null, first);
        assert.ok((await stored(gone.record.id)).revoked_at, `${first} first: the revocation stands`);
        assert.ok(await a.get('dqs:generation'), 'a new generation marker');
        // The copy that wrote first reloaded before the other's write-back: the version poll brings it along.
        await Promise.all([reconnect(a), reconnect(b)]);
        assert.ok(
          await until(async () => (await stale.verify(gone.key)) === undefined, 2000),
          `${first} first: the stale copy learns of the revocation`,
        );
        for (const store of [revoking, stale]) {
          assert.ok(await store.verify(kept.key));
          assert.is(await store.verify(gone.key), undefined);
        }
      } finally {
        await Promise.all([revoking.close(), stale.close()]);
      }
    }
  });

  shared(
    'Redis gone back in time (same marker, older version, as a lagging failover): the copy is written back and its revocation stands',
    async () => {
      await a.flushall();
      const store = await RedisKeyStore.open(a, log, { refreshMs: 50 });
      try {
        const kept = await store.create('kept');
        const gone = await store.create('gone');
        const before = JSON.stringify(gone.record);
        await store.revoke(gone.record.id);
        await sleep(200); // a few polls: the copy has seen version 3
        // What Redis held after the first create and before the rest, under the same marker.
        await b.multi().hdel('dqs:keys', kept.record.hash).hset('dqs:keys', gone.record.hash, before).set('dqs:keys:version', '1').exec();
        const stored = async (hash: string) => JSON.parse((await a.hget('dqs:keys', hash)) ?? 'null');
        assert.ok(
          await until(async () => (await stored(kept.record.hash)) !== null && (await stored(gone.record.hash)).revoked_at !== null, 2000),
          'written back',
        );
        await sleep(200); // a few more polls: the copy follows what Redis holds now
        assert.ok(await store.verify(kept.key));
        assert.is(await store.verify(gone.key), undefined);
      } finally {
        await store.close();
      }
    },
  );

  shared('Redis emptied: the newest use any replica wrote is written back', async () => {
    await a.flushall();
    const options = { refreshMs: HOUR, flushMs: 50 };
    const [one, other] = [await RedisKeyStore.open(a, log, options), await RedisKeyStore.open(b, log, options)];
    try {
      const { record } = await one.create('used');
      const at = Date.parse('2026-11-22T12:00:00Z');
      one.recordUse(record.id, at + 1000);
      other.recordUse(record.id, at);
      const lastUsed = async () => (await one.list())[0]?.last_used_at;
      assert.ok(
        await until(async () => (await a.zscore('dqs:keys:last-used', record.id)) === String(at + 1000), 2000),
        'both uses written',
      );
      await a.flushall();
      await Promise.all([reconnect(a), reconnect(b)]);
      assert.ok(await until(async () => (await lastUsed()) === new Date(at + 1000).toISOString(), 2000), `last used: ${await lastUsed()}`);
    } finally {
      await Promise.all([one.close(), other.close()]);
    }
  });
  shared.run();
} else {
  skippedSuite('key store contract: redis', REDIS_SKIP_REASON);
}
