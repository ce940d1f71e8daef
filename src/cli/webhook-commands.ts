import type { Command } from 'commander';
import type { DataQueryClient, WebhookEvent } from 'data-query-client';

/** `query webhooks …`: this key's webhooks (docs/api.md "Webhooks"), each answer as JSON on stdout. */
export function addWebhookCommands(cli: Command, connect: () => DataQueryClient, write: (text: string) => Promise<void>): void {
  const json = (value: unknown) => write(`${JSON.stringify(value, null, 2)}\n`);
  const webhooks = cli
    .command('webhooks')
    .description('This key\'s webhooks: signed notifications of new releases (docs/api.md "Webhooks")');
  webhooks
    .command('create <url>')
    .description('Subscribe URL; it must answer a signed webhook.test with a 2xx. Prints the secret, shown only now')
    .option('--events <types...>', 'release.published and/or release.withdrawn (default both)')
    .action(async (url: string, options: { events?: WebhookEvent[] }) => json(await connect().webhooks.create(url, options.events)));
  webhooks
    .command('list')
    .description('List them (never their secrets)')
    .action(async () => json(await connect().webhooks.list()));
  webhooks
    .command('enable <id>')
    .description('Turn one disabled by failures back on')
    .action(async (id: string) => json(await connect().webhooks.update(id, { enabled: true })));
  webhooks.command('delete <id>').action(async (id: string) => connect().webhooks.delete(id));
  webhooks
    .command('test <id>')
    .description('Send it a signed webhook.test now')
    .action(async (id: string) => json(await connect().webhooks.test(id)));
  webhooks
    .command('rotate-secret <id>')
    .description('A new secret; the old one signs beside it for 24 h')
    .action(async (id: string) => json(await connect().webhooks.rotateSecret(id)));
  webhooks
    .command('deliveries <id>')
    .description('Its delivery log: every attempt of the last 35 days, newest first, one JSON object a line')
    .action(async (id: string) => {
      for await (const delivery of connect().webhooks.deliveries(id)) await write(`${JSON.stringify(delivery)}\n`);
    });
  webhooks
    .command('redeliver <id> <msg_id>')
    .description('Send a message of its log again, with the same webhook-id')
    .action(async (id: string, msgId: string) => json(await connect().webhooks.redeliver(id, msgId)));
}
