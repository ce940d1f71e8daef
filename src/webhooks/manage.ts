import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { BlockedAddressError, ConflictError, EndpointUnreachableError, NotFoundError, TooManyWebhooksError } from '../errors/index.ts';
import type { AddressPolicy } from './address-policy.ts';
import { attempt } from './attempt.ts';
import { testMessage, type WebhookDelivery } from './delivery.ts';
import { newSecret } from './signing.ts';
import type { Endpoint, EventType, WebhookStore } from './store.ts';

/** Endpoints one API key may have. */
export const MOST_PER_KEY = 5;
/** How long a secret a rotation replaced still signs. */
const ROTATION_OVERLAP_MS = 24 * 3_600_000;

/** What clients see of an endpoint: never a secret (those are shown once, when made). */
export const endpointView = ({ id, url, events, enabled, disabled_reason, created_at }: Endpoint) => ({
  id,
  url,
  events,
  enabled,
  disabled_reason,
  created_at,
});

/** Webhooks as the API manages them, for one key at a time (another key's endpoint is a 404). */
export class Webhooks {
  constructor(
    readonly store: WebhookStore,
    readonly delivery: WebhookDelivery,
    readonly policy: AddressPolicy,
    private readonly clock: Clock,
  ) {}

  async own(keyId: string, id: string): Promise<Endpoint> {
    const endpoint = await this.store.get(id);
    if (endpoint?.key_id !== keyId) throw new NotFoundError(`No webhook ${id} for this API key`);
    return endpoint;
  }

  async create(keyId: string, url: string, events: readonly EventType[]): Promise<{ endpoint: Endpoint; secret: string }> {
    if ((await this.store.list(keyId)).length >= MOST_PER_KEY) throw new TooManyWebhooksError(MOST_PER_KEY);
    const id = `wh_${randomBytes(8).toString('hex')}`;
    const secret = newSecret();
    await this.reachable(id, url, [secret]);
    const endpoint: Endpoint = {
      id,
      key_id: keyId,
      url,
      events,
      secrets: [{ secret, expires_at: null }],
      enabled: true,
      disabled_reason: null,
      created_at: new Date(this.clock()).toISOString(),
      exhausted_in_row: 0,
    };
    await this.store.put(endpoint);
    return { endpoint, secret };
  }

  /** A new URL must answer the test as a new endpoint does; enabling again forgets the failures that disabled it. */
  async update(endpoint: Endpoint, change: { url?: string; events?: readonly EventType[]; enabled?: boolean }): Promise<Endpoint> {
    if (change.url !== undefined && change.url !== endpoint.url)
      await this.reachable(endpoint.id, change.url, [endpoint.secrets[0]!.secret]);
    const enabled = change.enabled ?? endpoint.enabled;
    const updated: Endpoint = {
      ...endpoint,
      url: change.url ?? endpoint.url,
      events: change.events ?? endpoint.events,
      enabled,
      disabled_reason: enabled ? null : (endpoint.disabled_reason ?? (change.enabled === false ? 'disabled by PATCH' : null)),
      exhausted_in_row: enabled && !endpoint.enabled ? 0 : endpoint.exhausted_in_row,
    };
    await this.store.put(updated);
    return updated;
  }

  async rotate(endpoint: Endpoint): Promise<{ secret: string; previous_expires_at: string }> {
    const now = this.clock();
    const secret = newSecret();
    const previous_expires_at = new Date(now + ROTATION_OVERLAP_MS).toISOString();
    // The replaced secret signs beside the new one for 24 h; older ones stop now.
    await this.store.put({
      ...endpoint,
      secrets: [
        { secret, expires_at: null },
        { secret: endpoint.secrets[0]!.secret, expires_at: previous_expires_at },
      ],
    });
    return { secret, previous_expires_at };
  }

  async sendTest(endpoint: Endpoint) {
    if (!endpoint.enabled)
      throw new ConflictError(`Webhook ${endpoint.id} is disabled (${endpoint.disabled_reason}); enable it with PATCH {"enabled": true}`);
    const message = testMessage(endpoint.id, this.clock());
    return { msg_id: message.id, ...(await this.delivery.sendNow(endpoint, message, 1)) };
  }

  /** Sends the URL a signed webhook.test and refuses it unless it answered 2xx: what makes an endpoint or changes its URL. */
  private async reachable(id: string, url: string, secrets: string[]): Promise<void> {
    const refused = await this.policy.check(new URL(url));
    if (refused) throw new BlockedAddressError(refused);
    const result = await attempt(this.policy, url, secrets, testMessage(id, this.clock()), this.clock);
    if (result.error?.startsWith('blocked_address: ')) throw new BlockedAddressError(result.error.slice('blocked_address: '.length));
    if (result.error !== null) throw new EndpointUnreachableError(result.error);
  }
}
