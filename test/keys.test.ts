import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { adminCli as admin } from './helpers/admin-cli.ts';
import { startTestService, type TestService, tempDir } from './helpers/service.ts';

// API keys end to end: the operator's CLI against a running server's admin
// listener, what is stored, restart survival and revocation.

const keys = suite('keys');
let service: TestService;
keys.before(async () => {
  service = await startTestService();
});
keys.after(() => service.stop());

keys('key create prints the new key alone on its last line, and it works at once', async () => {
  const out = await admin(service, 'key', 'create', '--client', 'Acme Analytics');
  assert.is(out.code, 0, out.stderr);
  const key = out.stdout.trimEnd().split('\n').at(-1)!;
  assert.match(key, /^sk_live_[0-9A-Za-z]{32,}$/);
  assert.is((await service.get('/v1/catalog', { key })).status, 200);
});

keys('key create refuses a blank client and says why', async () => {
  const blank = await admin(service, 'key', 'create', '--client', ' ');
  assert.is(blank.code, 1);
  assert.match(blank.stderr, /400: Invalid query parameters \(client: Name the client the key is for\)/);
});

keys('only a SHA-256 hash and a display prefix are stored, owner-readable only', async () => {
  const out = await admin(service, 'key', 'create', '--client', 'stored');
  const key = out.stdout.trimEnd().split('\n').at(-1)!;
  const file = path.join(service.stateDir, 'keys.json');
  const text = await fs.readFile(file, 'utf8');
  assert.not.ok(text.includes(key), 'the key itself is not stored');
  assert.not.ok(text.includes(key.slice(8)), 'nor its secret part');
  const record = JSON.parse(text).keys.find((k: { client: string }) => k.client === 'stored');
  assert.match(record.hash, /^[0-9a-f]{64}$/);
  assert.is(record.prefix, key.slice(0, 12));
  for (const name of ['keys.json', 'admin-token', 'cursor-secret']) {
    assert.is((await fs.stat(path.join(service.stateDir, name))).mode & 0o777, 0o600, name);
  }
});

keys('key list shows ids, prefixes and clients but never keys', async () => {
  const created = await admin(service, 'key', 'create', '--client', 'listed');
  const key = created.stdout.trimEnd().split('\n').at(-1)!;
  const out = await admin(service, 'key', 'list');
  assert.is(out.code, 0, out.stderr);
  assert.match(out.stdout, /listed/);
  assert.match(out.stdout, new RegExp(key.slice(0, 12)));
  assert.not.ok(out.stdout.includes(key));
  const json = JSON.parse((await admin(service, 'key', 'list', '--json')).stdout);
  assert.ok(json.every((k: Record<string, unknown>) => !('hash' in k) && /^key_/.test(String(k.id))));
});

keys('key revoke, by key or by id, takes effect on the next request', async () => {
  for (const by of ['key', 'id'] as const) {
    const created = await admin(service, 'key', 'create', '--client', `revoke-by-${by}`);
    const key = created.stdout.trimEnd().split('\n').at(-1)!;
    assert.is((await service.get('/v1/catalog', { key })).status, 200);
    const id = JSON.parse((await admin(service, 'key', 'list', '--json')).stdout).find(
      (k: { client: string }) => k.client === `revoke-by-${by}`,
    ).id;
    const out = await admin(service, 'key', 'revoke', by === 'key' ? key : id);
    assert.is(out.code, 0, out.stderr);
    const res = await service.get('/v1/catalog', { key });
    assert.is(res.status, 401);
    assert.is(res.json.error, 'Invalid or revoked API key');
  }
  const missing = await admin(service, 'key', 'revoke', 'key_0000000000000000');
  assert.is(missing.code, 1);
  assert.match(missing.stderr, /No key matches/);
});

keys('40 concurrent creates over the admin listener: every one answers with its key, and exactly those keys exist', async () => {
  const before = (await service.admin('GET', '/keys')).json.keys.length;
  const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => service.admin('POST', '/keys', { client: `burst-${i}` })));
  assert.equal(
    answers.map((a) => a.status),
    Array(40).fill(201),
    answers.find((a) => a.status !== 201)?.text,
  );
  const listed = (await service.admin('GET', '/keys')).json.keys;
  assert.is(listed.length, before + 40);
  const stored = JSON.parse(await fs.readFile(path.join(service.stateDir, 'keys.json'), 'utf8')).keys;
  assert.is(stored.length, before + 40, 'every returned key is on disk, and no other');
  for (const a of answers) assert.is((await service.get('/v1/catalog', { key: a.json.key })).status, 200);
});

keys('revoking by full key keeps the key out of the URL and out of every log line', async () => {
  const { key } = (await service.admin('POST', '/keys', { client: 'quiet' })).json;
  const out = await admin(service, 'key', 'revoke', key);
  assert.is(out.code, 0, out.stderr);
  assert.is((await service.get('/v1/catalog', { key })).status, 401);
  assert.not.ok(JSON.stringify(service.logs).includes(key.slice(8)), 'the key reached a log line');
  // A key put in the path anyway is refused, neither echoed nor logged, and stays valid.
  const byPath = await service.admin('POST', `/keys/${service.key}/revoke`);
  assert.is(byPath.status, 404, 'keys are no longer accepted in the path');
  assert.not.ok(byPath.text.includes(service.key.slice(8)), byPath.text);
  const line = service.logs.findLast((l) => l.msg === 'request' && l.listener === 'admin' && l.status === 404);
  assert.is(line?.url, '/keys/sk_live_[redacted]/revoke');
  assert.not.ok(JSON.stringify(service.logs).includes(service.key.slice(8)), 'the key in the path reached a log line');
  assert.is((await service.get('/v1/catalog')).status, 200);
});

keys('keys and revocations survive a restart', async () => {
  const stateDir = await tempDir();
  const first = await startTestService({ dataDir: service.dataDir, stateDir });
  const kept = (await first.admin('POST', '/keys', { client: 'kept' })).json.key;
  const revoked = (await first.admin('POST', '/keys', { client: 'revoked' })).json;
  await first.admin('POST', `/keys/${revoked.record.id}/revoke`);
  await first.stop();

  const second = await startTestService({ dataDir: service.dataDir, stateDir });
  assert.is((await second.get('/v1/catalog', { key: kept })).status, 200);
  assert.is((await second.get('/v1/catalog', { key: revoked.key })).status, 401);
  assert.is((await second.get('/v1/catalog', { key: first.key })).status, 200);
  await second.stop();
  await fs.rm(stateDir, { recursive: true });
});

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

keys('the admin listener is on loopback and wants the admin token', async () => {
  // Bound to 127.0.0.1, it refuses 127.0.0.2 (still loopback, so no traffic leaves the machine);
  // bound to every address, it would accept it.
  const { port } = new URL(service.adminUrl);
  assert.ok(await accepts('127.0.0.1', Number(port)), 'the admin listener does not accept 127.0.0.1');
  assert.not.ok(await accepts('127.0.0.2', Number(port)), 'the admin listener accepts connections beyond 127.0.0.1');
  for (const token of ['', 'wrong', `${await service.adminToken()}x`]) {
    const res = await service.admin('GET', '/keys', undefined, token);
    assert.is(res.status, 401);
    assert.is(res.json.error, 'Missing or invalid admin token');
  }
  const bad = await service.admin('POST', '/keys', { client: '' });
  assert.is(bad.status, 400);
  assert.ok(bad.json.details.fieldErrors.client);
  // The public listener does not serve admin routes.
  assert.is((await service.get('/keys')).status, 404);
});

keys('the start-up log says how to create the first key', async () => {
  assert.ok(service.logs.some((l) => l.level === 40 && /npm run --silent admin -- key create --client NAME/.test(l.msg)));
});

keys('the CLI explains when there is no admin token to read', async () => {
  const empty = await tempDir();
  const out = await admin({ stateDir: empty, adminUrl: service.adminUrl }, 'key', 'list');
  assert.is(out.code, 1);
  assert.match(out.stderr, /cannot read the admin token .*admin-token; start the server once/);
  await fs.rm(empty, { recursive: true });
});

keys('the CLI explains when no server is listening', async () => {
  const out = await admin({ stateDir: service.stateDir, adminUrl: 'http://127.0.0.1:1' }, 'key', 'list');
  assert.is(out.code, 1);
  assert.match(out.stderr, /cannot reach the admin listener at http:\/\/127\.0\.0\.1:1/);
});

keys.run();
