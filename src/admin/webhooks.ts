import type Router from '@koa/router';
import type { Clock } from '../clock.ts';
import type { KeyStore } from '../keys/store.ts';
import type { WebhookStore } from '../webhooks/store.ts';

/**
 * GET /webhooks on the admin listener: every key's endpoints and their health (whether
 * enabled and why not, its last attempt, the attempts still to make), for
 * `admin webhook list`. Never a secret.
 */
export function register(router: Router, options: { webhooks: WebhookStore; keys: KeyStore; clock: Clock }): void {
  router.get('/webhooks', async (ctx) => {
    const now = options.clock();
    const [endpoints, pending, keys] = await Promise.all([options.webhooks.list(), options.webhooks.pending(), options.keys.list()]);
    const clients = new Map(keys.map((k) => [k.id, { client: k.client, revoked: k.revoked_at !== null }]));
    ctx.body = {
      webhooks: await Promise.all(
        endpoints.map(async (e) => {
          const last = (await options.webhooks.deliveries(e.id, now))[0] ?? null;
          const key = clients.get(e.key_id);
          return {
            id: e.id,
            key_id: e.key_id,
            client: key?.client ?? null,
            url: e.url,
            events: e.events,
            enabled: e.enabled,
            disabled_reason: e.disabled_reason,
            key_revoked: key?.revoked ?? true,
            failed_messages_in_row: e.exhausted_in_row,
            pending_attempts: pending.filter((p) => p.endpoint_id === e.id).length,
            last_attempt: last,
          };
        }),
      ),
    };
  });
}
