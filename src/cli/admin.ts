import fs from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { request } from 'undici';
import { ConfigError, loadConfig } from '../config.ts';
import type { ErrorBody } from '../errors.ts';
import { SECRET_FILES } from '../state/secrets.ts';

// Operators' CLI. It talks to the running server's admin listener (127.0.0.1:ADMIN_PORT),
// so a change such as a revocation takes effect on the server's very next request.

interface PublicKeyRecord {
  id: string;
  prefix: string;
  client: string;
  created_at: string;
  revoked_at: string | null;
}

class CliError extends Error {}

async function call<T>(method: 'GET' | 'POST', route: string, body?: unknown): Promise<T> {
  const config = loadConfig();
  const tokenFile = path.join(config.STATE_DIR, SECRET_FILES.adminToken);
  // Only read: the server creates the token at its first start.
  const token = (await fs.readFile(tokenFile, 'utf8').catch(() => {
    throw new CliError(`cannot read the admin token ${tokenFile}; start the server once (npm start) with the same STATE_DIR, and run this as the same user`);
  })).trim();
  const url = `http://127.0.0.1:${config.ADMIN_PORT}${route}`;
  const response = await request(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  }).catch((err: Error & { code?: string }) => {
    throw new CliError(`cannot reach the admin listener at ${url} (${err.code ?? err.message}); is the server running (npm start) with the same ADMIN_PORT and STATE_DIR?`);
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
    const rows = keys.map((k) => [k.id, `${k.prefix}…`, k.client, k.created_at, k.revoked_at ?? 'active']);
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    for (const row of [['ID', 'PREFIX', 'CLIENT', 'CREATED', 'REVOKED'], ...rows]) {
      console.log(row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd());
    }
  });

key
  .command('revoke <key-or-id>')
  .description('Revoke a key by its id (key_…) or the full key; effective on the next request')
  .action(async (ref: string) => {
    const { record } = await call<{ record: PublicKeyRecord }>('POST', '/keys/revoke', { ref });
    console.log(`Revoked ${record.id} (${record.client}) at ${record.revoked_at}`);
  });

await program.parseAsync().catch((err: Error) => {
  console.error(`admin: ${err instanceof CliError || err instanceof ConfigError ? err.message : err.stack}`);
  process.exit(1);
});
