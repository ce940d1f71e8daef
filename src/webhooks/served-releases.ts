import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

// What each live replica serves (issue 53 item 3): a webhook for a release waits until
// every one serves it, so a subscriber who asks for it at once gets it from any.

export interface ServedReleases {
  /** Notes the release this replica serves now. */
  report(release: string): Promise<void>;
  /** The release each live replica serves. */
  served(): Promise<string[]>;
}

/** One process: it is the only replica. */
export class LocalServedReleases implements ServedReleases {
  private release: string | undefined;
  async report(release: string): Promise<void> {
    this.release = release;
  }
  async served(): Promise<string[]> {
    return this.release === undefined ? [] : [this.release];
  }
}

const PREFIX = 'dqs:replica:serves:';

/** Replicas sharing Redis: each writes its own key with a short TTL, so a dead one drops out within it. */
export class RedisServedReleases implements ServedReleases {
  private readonly id = randomBytes(8).toString('hex');

  constructor(
    private readonly redis: Redis,
    private readonly ttlMs: number,
  ) {}

  async report(release: string): Promise<void> {
    await this.redis.set(`${PREFIX}${this.id}`, release, 'PX', this.ttlMs);
  }

  async served(): Promise<string[]> {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await this.redis.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 100);
      keys.push(...found);
      cursor = next;
    } while (cursor !== '0');
    if (keys.length === 0) return [];
    return (await this.redis.mget(...keys)).filter((release): release is string => release !== null);
  }
}
