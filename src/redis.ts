import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { redactUrl } from './config.ts';

/**
 * The one place connections to Redis are made (limits, keys, and later invites share
 * it). No command waits longer than `timeoutMs`: `commandTimeout` bounds a command
 * on a live connection, and with the offline queue off a command sent while the
 * connection is down fails at once instead of waiting for a reconnect.
 */
export async function connectRedis(url: string, timeoutMs: number, log: Logger, onError: () => void = () => {}): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    commandTimeout: timeoutMs,
    connectTimeout: Math.max(1000, timeoutMs),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // Reconnect quickly but without hammering a Redis that is restarting.
    retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
  });
  let lastLogged = 0;
  let lastError: Error | undefined;
  redis.on('error', (err: Error) => {
    lastError = err;
    onError();
    // Every reconnect attempt reports its failure: one line a second is enough.
    if (Date.now() - lastLogged < 1000) return;
    lastLogged = Date.now();
    log.error({ err, redis: redactUrl(url) }, 'redis connection error');
  });
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw new Error(`REDIS_URL=${redactUrl(url)}: cannot connect (${(lastError ?? (err as Error)).message}); start Redis or fix REDIS_URL`);
  }
  return redis;
}
