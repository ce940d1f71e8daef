import fs from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { request } from 'undici';
import { ConfigError, loadConfig } from '../config.ts';
import type { ErrorBody } from '../errors/index.ts';
import { SECRET_FILES } from '../state/secrets.ts';

// Operators' CLI. It talks to the running server's admin listener (127.0.0.1:ADMIN_PORT),
// so a change such as a revocation takes effect on the server's very next request.

interface PublicKeyRecord {
  id: string;
  prefix: string;
  client: string;
  created_at: string;
  revoked_at: string | null;
  invite_id?: string;
  last_used_at?: string | null;
}

interface PublicInvite {
  id: string;
  client: string;
  created_at: string;
  expires_at: string;
  replaces: string | null;
  key_id: string | null;
  status: string;
}

class CliError extends Error {}

async function call<T>(method: 'GET' | 'POST', route: string, body?: unknown): Promise<T> {
  const config = loadConfig();
  const tokenFile = path.join(config.STATE_DIR, SECRET_FILES.adminToken);
  // Only read: the server creates the token at its first start.
  const token = (
    await fs.readFile(tokenFile, 'utf8').catch(() => {
      throw new CliError(
        `cannot read the admin token ${tokenFile}; start the server once (npm start) with the same STATE_DIR, and run this as the same user`,
      );
    })
  ).trim();
  const url = `http://127.0.0.1:${config.ADMIN_PORT}${route}`;
  const response = await request(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  }).catch((err: Error & { code?: string }) => {
    throw new CliError(
      `cannot reach the admin listener at ${url} (${err.code ?? err.message}); is the server running (npm start) with the same ADMIN_PORT and STATE_DIR?`,
    );
  });
  const payload = (await response.body.json().catch(() => ({}))) as T & ErrorBody;
  if (response.statusCode >= 400) {
    const fields = Object.entries(payload.details?.fieldErrors ?? {}).map(([field, messages]) => `${field}: ${messages.join('; ')}`);
    throw new CliError(`${response.statusCode}: ${payload.error ?? 'request failed'}${fields.length ? ` (${fields.join(', ')})` : ''}`);
  }
  return payload;
}

const program = new Command('admin').description('Manage API keys of a running data-query-service');
const key = program.command('key').description('Issue, list and revoke API keys');

key
  .command('create')
  .description('Issue a key; it is printed once, alone on the last line, and cannot be shown again')
  .requiredOption('--client <name>', 'who the key is for')
  .action(async ({ client }: { client: string }) => {
    const { key: secret, record } = await call<{ key: string; record: PublicKeyRecord }>('POST', '/keys', { client });
    console.log(`Created ${record.id} for ${record.client}. Store this key now; it is not shown again:`);
    console.log(secret);
  });

key
  .command('list')
  .description('List keys: id, display prefix, client, created, revoked')
  .option('--json', 'print JSON instead of a table')
  .action(async ({ json }: { json?: boolean }) => {
    const { keys } = await call<{ keys: PublicKeyRecord[] }>('GET', '/keys');
    if (json) return console.log(JSON.stringify(keys, null, 2));
    if (keys.length === 0) return console.log('No keys yet. Create one with: npm run --silent admin -- key create --client NAME');
    printTable(
      ['ID', 'PREFIX', 'CLIENT', 'CREATED', 'LAST USED', 'STATUS', 'FROM'],
      keys.map((k) => [
        k.id,
        `${k.prefix}…`,
        k.client,
        k.created_at,
        k.last_used_at ?? 'never',
        k.revoked_at ? `revoked ${k.revoked_at}` : 'active',
        k.invite_id ?? 'operator',
      ]),
    );
  });

key
  .command('revoke <key-or-id>')
  .description('Revoke a key by its id (key_…) or the full key; effective on the next request')
  .action(async (ref: string) => {
    const { record } = await call<{ record: PublicKeyRecord }>('POST', '/keys/revoke', { ref });
    console.log(`Revoked ${record.id} (${record.client}) at ${record.revoked_at}`);
  });

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i]!.length)));
  for (const row of [header, ...rows])
    console.log(
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    );
}

const invite = program.command('invite').description('Invite a client to claim its own key (spec section 5)');

invite
  .command('create')
  .description('Make a single-use invite; its claim URL is printed alone on the last line')
  .requiredOption('--client <name>', 'who the key will be for')
  .option('--expires <duration>', 'how long the link works: 30m, 12h, 7d (at most 90d)', '7d')
  .option('--replaces <key-id>', 'revoke this key when the invite is claimed (a lost key)')
  .action(async ({ client, expires, replaces }: { client: string; expires: string; replaces?: string }) => {
    const { url, invite: record } = await call<{ url: string; invite: PublicInvite }>('POST', '/invites', { client, expires, replaces });
    console.log(
      `Created ${record.id} for ${record.client}, valid until ${record.expires_at}${replaces ? `; claiming it revokes ${replaces}` : ''}.`,
    );
    console.log('Send this link to the client; it works once:');
    console.log(url);
  });

invite
  .command('list')
  .description('List invites: id, client, created, expires, status, the key it issued or replaces')
  .option('--json', 'print JSON instead of a table')
  .action(async ({ json }: { json?: boolean }) => {
    const { invites } = await call<{ invites: PublicInvite[] }>('GET', '/invites');
    if (json) return console.log(JSON.stringify(invites, null, 2));
    if (invites.length === 0) return console.log('No invites yet. Create one with: npm run --silent admin -- invite create --client NAME');
    printTable(
      ['ID', 'CLIENT', 'CREATED', 'EXPIRES', 'STATUS', 'KEY', 'REPLACES'],
      invites.map((i) => [i.id, i.client, i.created_at, i.expires_at, i.status, i.key_id ?? '-', i.replaces ?? '-']),
    );
  });

invite
  .command('revoke <id>')
  .description('Revoke an unclaimed invite by its id (inv_…); its link stops working at once')
  .action(async (id: string) => {
    const { invite: record } = await call<{ invite: PublicInvite }>('POST', `/invites/${encodeURIComponent(id)}/revoke`);
    console.log(`Revoked ${record.id} (${record.client}); status: ${record.status}`);
  });

interface AdminWebhook {
  id: string;
  client: string | null;
  url: string;
  enabled: boolean;
  disabled_reason: string | null;
  key_revoked: boolean;
  pending_attempts: number;
  last_attempt: { at: string; msg_id: string; status_code: number | null; error: string | null } | null;
}

program
  .command('webhook')
  .description('Webhooks (docs/api.md "Webhooks")')
  .command('list')
  .description("List every key's webhook endpoints and their health: enabled or why not, the last attempt, attempts still to make")
  .option('--json', 'print JSON instead of a table')
  .action(async ({ json }: { json?: boolean }) => {
    const { webhooks } = await call<{ webhooks: AdminWebhook[] }>('GET', '/webhooks');
    if (json) return console.log(JSON.stringify(webhooks, null, 2));
    if (webhooks.length === 0) return console.log('No webhooks yet: clients make them with POST /v1/webhooks');
    const health = (w: AdminWebhook) =>
      w.key_revoked
        ? 'stopped: key revoked'
        : !w.enabled
          ? `disabled: ${w.disabled_reason}`
          : w.last_attempt?.error
            ? `failing: ${w.last_attempt.error}`
            : 'ok';
    printTable(
      ['ID', 'CLIENT', 'URL', 'HEALTH', 'LAST ATTEMPT', 'PENDING'],
      webhooks.map((w) => [
        w.id,
        w.client ?? '-',
        w.url,
        health(w),
        w.last_attempt ? `${w.last_attempt.at} ${w.last_attempt.msg_id} ${w.last_attempt.status_code ?? 'no answer'}` : 'never',
        String(w.pending_attempts),
      ]),
    );
  });

interface UsageDay {
  date: string;
  requests: number;
  by_status: Record<string, number>;
  refused: Record<string, number>;
  exports: number;
  bytes_sent: number;
  heavy_seconds: number;
}

interface UsageRow {
  id: string;
  client: string | null;
  requests: number;
  refused: number;
  exports: number;
  heavy_seconds: number;
  bytes_sent: number;
}

const tallyText = (tally: Record<string, number>) =>
  Object.entries(tally)
    .map(([name, n]) => `${name} ${n}`)
    .join(', ') || '-';

program
  .command('usage [key-or-id]')
  .description("A key's usage per UTC day, or with --top the keys that use the service most; read from the store /v1/usage/daily reads")
  .option('--days <n>', 'the last N UTC days, today included (at most 92)', '7')
  .option('--top <n>', 'list the N keys with the most usage instead of one key')
  .option('--by <measure>', 'with --top: order by requests, refused, exports or heavy_seconds', 'requests')
  .option('--json', 'print JSON instead of a table')
  .action(async (ref: string | undefined, options: { days: string; top?: string; by: string; json?: boolean }) => {
    if (options.top !== undefined) {
      const query = new URLSearchParams({ days: options.days, top: options.top, by: options.by });
      const top = await call<{ start: string; end: string; keys: UsageRow[] }>('GET', `/usage?${query}`);
      if (options.json) return console.log(JSON.stringify(top, null, 2));
      console.log(`Usage from ${top.start} to ${top.end} (UTC), by ${options.by}:`);
      if (top.keys.length === 0) return console.log('No requests with a key in these days.');
      return printTable(
        ['ID', 'CLIENT', 'REQUESTS', 'REFUSED', 'EXPORTS', 'HEAVY S', 'BYTES SENT'],
        top.keys.map((k) => [
          k.id,
          k.client ?? '(unknown)',
          ...[k.requests, k.refused, k.exports, k.heavy_seconds, k.bytes_sent].map(String),
        ]),
      );
    }
    if (!ref) throw new CliError('name a key (its id key_… or the full key), or give --top N');
    const usage = await call<{ key: { id: string; client: string }; start: string; end: string; days: UsageDay[] }>('POST', '/usage/key', {
      ref,
      days: options.days,
    });
    if (options.json) return console.log(JSON.stringify(usage, null, 2));
    console.log(`Usage of ${usage.key.id} (${usage.key.client}) from ${usage.start} to ${usage.end} (UTC):`);
    printTable(
      ['DATE', 'REQUESTS', 'STATUS', 'REFUSED', 'EXPORTS', 'HEAVY S', 'BYTES SENT'],
      usage.days.map((d) => [
        d.date,
        String(d.requests),
        tallyText(d.by_status),
        tallyText(d.refused),
        String(d.exports),
        String(d.heavy_seconds),
        String(d.bytes_sent),
      ]),
    );
  });

await program.parseAsync().catch((err: Error) => {
  console.error(`admin: ${err instanceof CliError || err instanceof ConfigError ? err.message : err.stack}`);
  process.exit(1);
});
