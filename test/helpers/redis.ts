import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { createLogger } from '../../src/log.ts';
import { connectRedis } from '../../src/redis.ts';
import { startRedis } from '../../tools/redis-server.ts';

// Redis suites: a real server (tools/redis-server.ts) and clients connected as the service connects them.

/** A redis-server and `count` clients connected the way the service connects. */
export async function redisWithClients(count: number, timeoutMs: number) {
  const server = await startRedis();
  const clients: Redis[] = [];
  for (let i = 0; i < count; i++) clients.push(await connectRedis(server.url, timeoutMs, createLogger('silent')));
  return {
    server,
    clients,
    async stop() {
      for (const client of clients) client.disconnect();
      await server.stop();
    },
  };
}

/** Drops and makes again a connection, as a network blip or a Redis restart does; its 'ready' makes the stores on it check Redis. */
export async function reconnect(client: Redis): Promise<void> {
  const ready = once(client, 'ready');
  client.disconnect(true);
  await ready;
}

/** Polls `check` every 20 ms until it holds; false once `ms` have passed. */
export async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  for (const started = Date.now(); Date.now() - started < ms; await sleep(20)) if (await check()) return true;
  return false;
}
