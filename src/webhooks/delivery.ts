import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Metrics } from '../metrics.ts';
import type { Publication } from '../releases/publication-log.ts';
import type { AddressPolicy } from './address-policy.ts';
import { ATTEMPT_TIMEOUT_MS, type AttemptResult, attempt, type Message } from './attempt.ts';
import type { ServedReleases } from './served-releases.ts';
import type { Endpoint, Pending, WebhookStore } from './store.ts';

/** A lease outlives the attempt it guards: another replica takes an attempt over only once its sender is gone. */
const LEASE_MS = ATTEMPT_TIMEOUT_MS + 5000;

export const messageId = (seq: number) => `msg_${seq}`;
export const seqOf = (msgId: string) => (/^msg_[1-9]\d{0,15}$/.test(msgId) ? Number(msgId.slice(4)) : undefined);

/** The secrets that sign now: the current one, and one a rotation replaced for its last 24 h. */
export const liveSecrets = (endpoint: Endpoint, now: number) =>
  endpoint.secrets.filter((s) => s.expires_at === null || Date.parse(s.expires_at) > now).map((s) => s.secret);

export interface DeliveryOptions {
  readonly store: WebhookStore;
  readonly policy: AddressPolicy;
  readonly served: ServedReleases;
  /** The publication log as this replica last read it. */
  readonly publications: () => readonly Publication[];
  /** The release this replica serves. */
  readonly current: () => string | undefined;
  /** Whether the API key that made an endpoint is still active: a revoked key's webhooks stop. */
  readonly activeKey: (keyId: string) => Promise<boolean>;
  /** The body of the event a publication-log line is (src/notify/release-event.ts). */
  readonly eventOf: (line: Publication) => Promise<unknown>;
  /** WEBHOOK_RETRY_SCHEDULE: the delay before each retry, in ms. */
  readonly retrySchedule: readonly number[];
  /** WEBHOOK_SETTLE_MAX_MS. */
  readonly settleMaxMs: number;
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics: Pick<Metrics, 'webhookAttempts' | 'webhookDeliverySeconds' | 'webhooksDisabled'>;
  /** How often the log and the attempts due are looked at. */
  readonly tickMs?: number;
}

/**
 * The one watcher per process that turns new lines of the publication log into
 * webhooks: it queues each new line's message for every endpoint subscribed to its
 * type (the replica that moves the shared cursor queues it), and makes each attempt
 * that is due, once every live replica serves the release (or WEBHOOK_SETTLE_MAX_MS
 * later), under a lease so that one replica makes it; a retry keeps the webhook-id.
 */
export class WebhookDelivery {
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly bodies = new Map<number, string>();

  constructor(private readonly options: DeliveryOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.options.tickMs ?? 250);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.ticking;
    await Promise.all(this.inFlight.values());
  }

  /** One look at the log and the attempts due; overlapping calls share the one running. */
  tick(): Promise<void> {
    this.ticking ??= this.look()
      .catch((err: Error) => this.options.log.error({ err }, 'webhooks: cannot read or write their state; trying again'))
      .finally(() => {
        this.ticking = undefined;
      });
    return this.ticking;
  }

  /** Signs and sends `message` to `endpoint` once and logs the attempt (the test event, a redelivery). */
  async sendNow(endpoint: Endpoint, message: Message, attemptNumber: number): Promise<AttemptResult> {
    const { store, policy, clock } = this.options;
    const result = await attempt(policy, endpoint.url, liveSecrets(endpoint, clock()), message, clock);
    await store.record(endpoint.id, {
      at: new Date(clock()).toISOString(),
      msg_id: message.id,
      attempt: attemptNumber,
      ...omitRetry(result),
    });
    return result;
  }

  /** The body of message `seq`, made once per publication; undefined when the log holds no such line. */
  async body(seq: number): Promise<string | undefined> {
    const known = this.bodies.get(seq);
    if (known !== undefined) return known;
    const line = this.options.publications().find((l) => l.seq === seq);
    if (!line) return undefined;
    const body = JSON.stringify(await this.options.eventOf(line));
    this.bodies.set(seq, body);
    return body;
  }

  private async look(): Promise<void> {
    const current = this.options.current();
    if (current !== undefined) await this.options.served.report(current);
    await this.queueNew();
    await this.startDue();
  }

  private async queueNew(): Promise<void> {
    const { store, publications, clock } = this.options;
    const log = publications();
    const cursor = await store.cursor();
    // The history before the first start is no news to anyone.
    if (cursor === undefined) {
      await store.advance(log.at(-1)?.seq ?? 0);
      return;
    }
    // Queued first, the cursor moved after: a replica that dies between the two leaves the
    // line to be queued again once its lease lapses (at worst a message sent twice with one
    // webhook-id, which receivers dedupe), never a line whose messages nobody queued.
    for (const line of log) {
      if (line.seq <= cursor || !(await store.lease(`queue:${line.seq}`, LEASE_MS))) continue;
      const now = clock();
      const serves = line.type === 'release.published' ? line.release : line.previous;
      for (const endpoint of await store.list()) {
        if (!endpoint.enabled || !endpoint.events.includes(line.type)) continue;
        await store.schedule({ endpoint_id: endpoint.id, seq: line.seq, attempt: 1, due_at: now, serves, queued_at: now });
      }
      await store.advance(line.seq);
    }
  }

  private async startDue(): Promise<void> {
    const { store, clock, log, settleMaxMs } = this.options;
    const pending = await store.pending();
    const now = clock();
    let served: string[] | undefined;
    for (const p of pending) {
      const name = `${p.endpoint_id}:${p.seq}:${p.attempt}`;
      if (p.due_at > now || this.inFlight.has(name)) continue;
      if (p.attempt === 1 && p.serves !== null) {
        served ??= await this.options.served.served();
        const waited = now - p.queued_at;
        if (served.some((release) => release !== p.serves)) {
          if (waited < settleMaxMs) continue;
          log.warn(
            { msg_id: messageId(p.seq), release: p.serves, waited_ms: waited, served },
            'webhook sent before every replica serves its release (WEBHOOK_SETTLE_MAX_MS passed)',
          );
        }
      }
      if (!(await store.lease(name, LEASE_MS))) continue;
      const run = this.run(p)
        .catch((err: Error) => log.error({ err, msg_id: messageId(p.seq), endpoint: p.endpoint_id }, 'webhook attempt failed to run'))
        .finally(() => this.inFlight.delete(name));
      this.inFlight.set(name, run);
    }
  }

  private async run(p: Pending): Promise<void> {
    const { store, clock, log } = this.options;
    const endpoint = await store.get(p.endpoint_id);
    const body = await this.body(p.seq);
    if (!endpoint?.enabled || body === undefined || !(await this.options.activeKey(endpoint.key_id))) {
      await store.unschedule(p.endpoint_id, p.seq);
      return;
    }
    const result = await this.sendNow(endpoint, { id: messageId(p.seq), body }, p.attempt);
    log.info(
      {
        msg_id: messageId(p.seq),
        endpoint: endpoint.id,
        attempt: p.attempt,
        status_code: result.status_code,
        since_queued_ms: clock() - p.queued_at,
      },
      'webhook attempt',
    );
    await this.settle(p, result);
  }

  /** What follows an attempt: done, disabled, a retry, or the message given up. */
  private async settle(p: Pending, result: AttemptResult): Promise<void> {
    const { store, clock, retrySchedule, metrics } = this.options;
    const now = clock();
    const fresh = await store.get(p.endpoint_id);
    if (!fresh) return;
    if (result.error === null) {
      metrics.webhookAttempts.inc({ outcome: 'delivered' });
      metrics.webhookDeliverySeconds.observe((now - p.queued_at) / 1000);
      await store.unschedule(p.endpoint_id, p.seq);
      if (fresh.exhausted_in_row > 0) await store.put({ ...fresh, exhausted_in_row: 0 });
      return;
    }
    if (result.status_code === 410) {
      metrics.webhookAttempts.inc({ outcome: 'gone' });
      metrics.webhooksDisabled.inc({ reason: 'gone' });
      await store.unschedule(p.endpoint_id, p.seq);
      await store.put({
        ...fresh,
        enabled: false,
        disabled_reason: `${messageId(p.seq)} was answered 410 Gone at ${new Date(now).toISOString()}`,
      });
      return;
    }
    const delay = retrySchedule[p.attempt - 1];
    if (delay !== undefined) {
      metrics.webhookAttempts.inc({ outcome: 'retry' });
      // ±10%, so that endpoints failing together do not retry together; a longer Retry-After wins.
      const due = now + Math.max(delay * (0.9 + Math.random() * 0.2), result.retry_after_ms ?? 0);
      await store.schedule({ ...p, attempt: p.attempt + 1, due_at: due });
      return;
    }
    metrics.webhookAttempts.inc({ outcome: 'given_up' });
    await store.unschedule(p.endpoint_id, p.seq);
    const inRow = fresh.exhausted_in_row + 1;
    if (inRow >= 2 && fresh.enabled) metrics.webhooksDisabled.inc({ reason: 'failing' });
    await store.put({
      ...fresh,
      exhausted_in_row: inRow,
      ...(inRow >= 2 && {
        enabled: false,
        disabled_reason: `two messages in a row failed every attempt (the last, ${messageId(p.seq)}, at ${new Date(now).toISOString()}: ${result.error})`,
      }),
    });
  }
}

const omitRetry = ({ retry_after_ms: _, ...rest }: AttemptResult) => rest;

/** A webhook.test message: its own id, never one of the log's. */
export const testMessage = (endpointId: string, now: number): Message => ({
  id: `msg_test_${randomBytes(8).toString('hex')}`,
  body: JSON.stringify({ type: 'webhook.test', timestamp: new Date(now).toISOString(), data: { webhook_id: endpointId } }),
});
