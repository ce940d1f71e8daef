import { DataQueryError, DataQueryNetworkError } from './errors.ts';
import type { ClientOptions } from './options.ts';
import type { ErrorDetails } from './types.ts';

// /v1/webhooks from the typed client (docs/api.md "Webhooks"). Never retried: making an
// endpoint sends its URL a test event, and a retry of a POST could make two.

export type WebhookEvent = 'release.published' | 'release.withdrawn';

export interface Webhook {
  readonly id: string;
  readonly url: string;
  readonly events: WebhookEvent[];
  readonly enabled: boolean;
  /** Why it is disabled: a 410, or two messages in a row that failed every attempt. */
  readonly disabled_reason: string | null;
  readonly created_at: string;
}

/** One attempt of the delivery log. */
export interface WebhookDelivery {
  readonly at: string;
  readonly msg_id: string;
  readonly attempt: number;
  readonly status_code: number | null;
  readonly duration_ms: number;
  readonly error: string | null;
}

export interface WebhookAttempt extends Omit<WebhookDelivery, 'at'> {}

export class Webhooks {
  constructor(private readonly options: ClientOptions) {}

  /** Subscribes `url`; the secret (`whsec_…`) is in this answer only. */
  create(url: string, events?: WebhookEvent[]): Promise<Webhook & { secret: string }> {
    return this.call('POST', '/v1/webhooks', { url, ...(events && { events }) });
  }

  async list(): Promise<Webhook[]> {
    return (await this.call<{ webhooks: Webhook[] }>('GET', '/v1/webhooks')).webhooks;
  }

  get(id: string): Promise<Webhook> {
    return this.call('GET', `/v1/webhooks/${encodeURIComponent(id)}`);
  }

  update(id: string, change: { url?: string; events?: WebhookEvent[]; enabled?: boolean }): Promise<Webhook> {
    return this.call('PATCH', `/v1/webhooks/${encodeURIComponent(id)}`, change);
  }

  async delete(id: string): Promise<void> {
    await this.call('DELETE', `/v1/webhooks/${encodeURIComponent(id)}`);
  }

  test(id: string): Promise<WebhookAttempt> {
    return this.call('POST', `/v1/webhooks/${encodeURIComponent(id)}/test`);
  }

  /** A new secret; the old one still signs until `previous_expires_at` (24 h). */
  rotateSecret(id: string): Promise<{ secret: string; previous_expires_at: string }> {
    return this.call('POST', `/v1/webhooks/${encodeURIComponent(id)}/rotate-secret`);
  }

  /** Every attempt of the last 35 days, newest first, across the log's pages. */
  async *deliveries(id: string): AsyncGenerator<WebhookDelivery> {
    let cursor: string | null = '0';
    while (cursor !== null) {
      const page: { deliveries: WebhookDelivery[]; pagination: { cursor: string | null } } = await this.call(
        'GET',
        `/v1/webhooks/${encodeURIComponent(id)}/deliveries?limit=100&cursor=${cursor}`,
      );
      yield* page.deliveries;
      cursor = page.pagination.cursor;
    }
  }

  /** Sends message `msgId` of its log again, with the same webhook-id. */
  redeliver(id: string, msgId: string): Promise<WebhookAttempt> {
    return this.call('POST', `/v1/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(msgId)}/redeliver`);
  }

  private async call<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
    const url = `${this.options.baseUrl.replace(/\/+$/, '')}${path}`;
    let res: Response;
    try {
      // Node's own fetch, as the rest of the package: no runtime dependencies.
      res = await fetch(url, {
        method,
        headers: {
          'x-api-key': this.options.apiKey,
          accept: 'application/json',
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        ...(this.options.dispatcher && { dispatcher: this.options.dispatcher }),
      } as RequestInit);
    } catch (cause) {
      const reason = ((cause as Error).cause as Error | undefined)?.message ?? (cause as Error).message;
      throw new DataQueryNetworkError(`Cannot reach ${new URL(url).origin}: ${reason}`, { cause });
    }
    const text = await res.text();
    if (res.status >= 200 && res.status < 300) return (text ? JSON.parse(text) : undefined) as T;
    let parsed: { error?: string; details?: ErrorDetails } = {};
    try {
      parsed = JSON.parse(text);
    } catch {}
    const requestId = res.headers.get('x-request-id') ?? undefined;
    throw new DataQueryError(res.status, parsed.error ?? `HTTP ${res.status}`, parsed.details, undefined, requestId);
  }
}
