import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { KeyStore } from '../keys/store.ts';
import type { Metrics } from '../metrics.ts';
import type { ReleaseEvents } from '../notify/release-event.ts';
import type { Releases } from '../releases/releases.ts';
import { AddressPolicy } from './address-policy.ts';
import { WebhookDelivery } from './delivery.ts';
import { FileWebhookStore } from './file-store.ts';
import { Webhooks } from './manage.ts';
import { RedisWebhookStore } from './redis-store.ts';
import { LocalServedReleases, RedisServedReleases } from './served-releases.ts';

/** How long a replica's report of the release it serves lasts unless renewed (every tick): a dead one drops out within it. */
const REPORT_TTL_MS = 3000;

/** Webhooks in Redis with REDIS_URL, under STATE_DIR otherwise, with the one delivery watcher of this process (not started). */
export async function openWebhooks(options: {
  config: Config;
  redis: Redis | undefined;
  keys: KeyStore;
  releases: Releases;
  releaseEvents: ReleaseEvents;
  /** Where links in events point: PUBLIC_URL, or the public listener once it listens. */
  baseUrl: () => string;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
}): Promise<Webhooks> {
  const { config, redis, keys, releases, clock } = options;
  const store = redis ? new RedisWebhookStore(redis) : await FileWebhookStore.open(config.STATE_DIR);
  const policy = new AddressPolicy(config.WEBHOOK_ALLOW_CIDRS, config.WEBHOOK_ALLOW_HTTP);
  const delivery = new WebhookDelivery({
    store,
    policy,
    served: redis ? new RedisServedReleases(redis, REPORT_TTL_MS) : new LocalServedReleases(),
    publications: () => releases.publications(),
    current: () => releases.current()?.id,
    activeKey: async (id) => (await keys.list()).some((k) => k.id === id && k.revoked_at === null),
    eventOf: (line) => options.releaseEvents.event(line, options.baseUrl()),
    retrySchedule: config.WEBHOOK_RETRY_SCHEDULE,
    settleMaxMs: config.WEBHOOK_SETTLE_MAX_MS,
    clock,
    log: options.log.child({ component: 'webhooks' }),
    metrics: options.metrics,
  });
  return new Webhooks(store, delivery, policy, clock);
}
