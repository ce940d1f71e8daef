import { ReplyError } from 'ioredis';

/**
 * A store's command that Redis did not answer: down, unreachable, or slower than
 * REDIS_TIMEOUT_MS. What the command was to change was not changed (a store that
 * cannot tell undoes it), and the admin listener answers 503 naming Redis.
 */
export class RedisUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`Redis did not answer: ${(cause as Error | undefined)?.message ?? cause}`, { cause });
  }
}

/** `command`'s result; failing to reach Redis is a RedisUnavailableError, an error Redis replied with stays what it is. */
export async function answered<T>(command: Promise<T>): Promise<T> {
  try {
    return await command;
  } catch (err) {
    if (err instanceof ReplyError) throw err;
    throw new RedisUnavailableError(err);
  }
}
