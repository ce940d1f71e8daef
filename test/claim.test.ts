import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hashToken } from '../src/invites/store.ts';
import { adminCli as admin } from './helpers/admin-cli.ts';
import { claim, openInvite, postClaim, shownKey } from './helpers/claim.ts';
import { type Response, send, startTestService, type TestService, tempDir } from './helpers/service.ts';

// Invites and the claim page over HTTP (spec section 5): the operator's CLI makes an
// invite, the client's browser (here: plain requests, no JavaScript) claims it once.

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1)!;

let now = Date.parse('2026-11-22T12:00:00Z');
const test = suite('invites and the claim page');
let service: TestService;
test.before(async () => {
  service = await startTestService({ clock: () => now, env: { CLAIM_GUARD_PER_MINUTE: '1000' } });
});
test.after(() => service.stop());

const invite = async (body: Record<string, string> = {}) => {
  const res = await service.admin('POST', '/invites', { client: 'Acme Analytics', ...body });
  assert.is(res.status, 201, res.text);
  return res.json as { url: string; invite: { id: string; status: string; expires_at: string } };
};

function assertHtmlPage(res: Response, status: number) {
  assert.is(res.status, status, res.text.slice(0, 300));
  assert.match(String(res.headers['content-type']), /^text\/html; charset=utf-8/);
  assert.is(res.headers['cache-control'], 'no-store');
  assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
  assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
  assert.is(res.headers['referrer-policy'], 'no-referrer');
  assert.match(res.text, /Data Query Service/);
}

test('asset names are looked up as own entries only: constructor, __proto__ and friends are 404s', async () => {
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
    const res = await service.get(`/claim/assets/${name}`, { key: null });
    assert.is(res.status, 404, name);
    assert.equal(res.json, { error: 'Not found' }, name);
    assert.is.not(res.headers['cache-control'], 'public, max-age=3600', name);
  }
  assert.is((await send(`${service.url}/claim/assets/claim.css`)).status, 200);
});

test('invite create prints the claim URL alone on its last line: PUBLIC_URL/claim/<long random token>', async () => {
  const out = await admin(service, 'invite', 'create', '--client', 'Acme Analytics', '--expires', '2d');
  assert.is(out.code, 0, out.stderr);
  const url = lastLine(out.stdout);
  assert.match(url, new RegExp(`^${service.url}/claim/invtok_[A-Za-z0-9_-]{43}$`));
  const listed = JSON.parse((await admin(service, 'invite', 'list', '--json')).stdout);
  const mine = listed.find((i: { client: string; expires_at: string }) => i.expires_at === new Date(now + 2 * 86_400_000).toISOString());
  assert.is(mine.status, 'open');
  assert.not.ok(JSON.stringify(listed).includes(url.split('/claim/')[1]!.slice(7)), 'invite list shows no token');
  assert.not.ok(JSON.stringify(listed).includes('hash'));
  const table = (await admin(service, 'invite', 'list')).stdout.trimEnd().split('\n');
  assert.match(table[0]!, /^ID +CLIENT +CREATED +EXPIRES +STATUS +KEY +REPLACES$/);
  assert.match(table.find((r) => r.startsWith(mine.id))!, / open +- +-$/);
});

test('the claim page names the client and offers one button in a POST form; HTML, no-store, CSP, no referrer', async () => {
  const { url } = await invite({ client: 'Acme <Analytics> & Co' });
  const { page, cookie, csrf } = await openInvite(url);
  assertHtmlPage(page, 200);
  assert.match(page.text, /Acme &lt;Analytics&gt; &amp; Co/);
  assert.is(page.text.match(/<button/g)?.length, 1);
  assert.match(page.text, /<form method="post">[\s\S]*<button type="submit">Claim Your API Key<\/button>/);
  assert.not.match(page.text, /<script/, 'the claim page needs no JavaScript');
  assert.match(cookie, /^claim_csrf=.{32,}$/);
  assert.ok(csrf.length >= 32);
  assert.match(String([page.headers['set-cookie']].flat()[0]), /HttpOnly; SameSite=Strict/);
});

test('claiming shows the key once, with a warning, a copy button and a curl example; the key works; the invite is spent', async () => {
  const { url, invite: record } = await invite();
  const res = await claim(url);
  assertHtmlPage(res, 200);
  const key = shownKey(res.text)!;
  assert.match(key, /^sk_live_[0-9A-Za-z]{40}$/);
  assert.match(res.text, /shown only this once and cannot be shown again/);
  assert.match(res.text, /data-copy="key"/);
  assert.ok(res.text.includes(`curl -H "x-api-key: ${key}" ${service.url}/v1/catalog`));
  assert.is((await service.get('/v1/catalog', { key })).status, 200);

  const again = await openInvite(url);
  assertHtmlPage(again.page, 410);
  assert.match(again.page.text, /already been used[\s\S]*ask the operator for a new invite/);
  assert.not.ok(again.page.text.includes(key));
  const listed = (await service.admin('GET', '/invites')).json.invites.find((i: { id: string }) => i.id === record.id);
  assert.is(listed.status, 'claimed');
  const keyRecord = (await service.admin('GET', '/keys')).json.keys.find((k: { id: string }) => k.id === listed.key_id);
  assert.is(keyRecord.invite_id, record.id);
  assert.is(keyRecord.client, 'Acme Analytics');

  const logged = JSON.stringify(service.logs);
  assert.not.ok(logged.includes(key.slice(8)), 'the key reached a log');
  assert.not.ok(logged.includes(url.split('/claim/')[1]!.slice(4)), 'the token reached a log');
  assert.ok(service.logs.some((l) => l.url === '/claim/[redacted]'));
});

test('admin key list: id, prefix, client, created, last used, status and where the key came from', async () => {
  const { url, invite: record } = await invite({ client: 'Listed Client' });
  const key = shownKey((await claim(url)).text)!;
  const unused = (await service.admin('POST', '/keys', { client: 'Never Used' })).json;
  await service.admin('POST', `/keys/${unused.record.id}/revoke`);
  assert.is((await service.get('/v1/catalog', { key })).status, 200);
  const out = await admin(service, 'key', 'list');
  assert.is(out.code, 0, out.stderr);
  const [header, ...rows] = out.stdout.trimEnd().split('\n');
  assert.match(header!, /^ID +PREFIX +CLIENT +CREATED +LAST USED +STATUS +FROM$/);
  const claimed = rows.find((r) => r.includes('Listed Client'))!;
  assert.match(
    claimed,
    new RegExp(`^key_[0-9a-f]{16} +${key.slice(0, 12)}… +Listed Client +\\S+ +${new Date(now).toISOString()} +active +${record.id}$`),
  );
  const manual = rows.find((r) => r.includes('Never Used'))!;
  assert.match(manual, / never +revoked \S+ +operator$/);
  assert.not.ok(out.stdout.includes(key));
});

test('50 simultaneous claims of one invite: exactly one key', async () => {
  const { url, invite: record } = await invite({ client: 'Racer' });
  const form = await openInvite(url);
  const results = await Promise.all(Array.from({ length: 50 }, () => postClaim(url, form)));
  assert.equal(results.filter((r) => r.status === 200).length, 1);
  assert.equal(results.filter((r) => r.status === 410).length, 49);
  const keys = (await service.admin('GET', '/keys')).json.keys.filter((k: { invite_id?: string }) => k.invite_id === record.id);
  assert.is(keys.length, 1);
});

test("a form without the page view's token, or from another site, is refused with 403 and spends nothing", async () => {
  const { url } = await invite({ client: 'Careful' });
  const form = await openInvite(url);
  assertHtmlPage(await postClaim(url, { cookie: form.cookie, csrf: 'x'.repeat(32) }), 403);
  assertHtmlPage(await postClaim(url, { cookie: '', csrf: form.csrf }), 403);
  const other = await openInvite(url);
  assertHtmlPage(await postClaim(url, { cookie: other.cookie, csrf: form.csrf }), 403);
  const crossSite = await postClaim(url, form, { 'sec-fetch-site': 'cross-site' });
  assertHtmlPage(crossSite, 403);
  assert.match(crossSite.text, /Your invite has not been used/);
  assert.ok(shownKey((await postClaim(url, form)).text), 'the invite still works from its own page');
});

test('expired, revoked and unknown invites get clear HTML pages: 410, 410, 404', async () => {
  const expiring = await invite({ client: 'Late', expires: '1h' });
  const revoked = await invite({ client: 'Withdrawn' });
  const out = await admin(service, 'invite', 'revoke', revoked.invite.id);
  assert.is(out.code, 0, out.stderr);
  assert.match(out.stdout, /Revoked inv_[0-9a-f]{16} \(Withdrawn\)/);
  const form = await openInvite(expiring.url);
  now += 3_600_000;
  try {
    const late = await postClaim(expiring.url, form);
    assertHtmlPage(late, 410);
    assert.match(late.text, /expired[\s\S]*Ask the operator for a new invite/);
    assertHtmlPage((await openInvite(revoked.url)).page, 410);
    const unknown = (await openInvite(`${service.url}/claim/inv_${'A'.repeat(43)}`)).page;
    assertHtmlPage(unknown, 404);
    assert.match(unknown.text, /ask the operator for a new invite/);
    assertHtmlPage((await openInvite(`${service.url}/claim/not-a-token`)).page, 404);
    assertHtmlPage(await send(`${service.url}/claim/not-a-token`, { method: 'PUT' }), 405);
  } finally {
    now -= 3_600_000;
  }
  assert.is((await service.admin('POST', `/invites/${expiring.invite.id}/revoke`)).status, 200);
  const notFound = await send(`${service.url}/nowhere`);
  assert.is(notFound.status, 404);
  assert.equal(notFound.json, { error: 'Not found' }, 'JSON everywhere else');
});

test('a token given where an invite id belongs is refused, neither echoed nor logged; the invite stays open', async () => {
  const { url, invite: record } = await invite({ client: 'Pasted' });
  const token = url.split('/claim/')[1]!;
  const secret = token.slice('invtok_'.length);
  const everyChar = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
  const given = [token, everyChar(token), encodeURIComponent(url), `inv_${secret}`, token.slice(0, 20)];
  for (const segment of given) {
    const res = await service.admin('POST', `/invites/${segment}/revoke`);
    assert.is(res.status, 400, segment);
    assert.match(res.json.details.fieldErrors.id[0], /not its id .*admin invite list/);
    assert.not.ok(res.text.includes(secret.slice(0, 12)), res.text);
    const line = service.logs.findLast((l) => l.msg === 'request' && l.listener === 'admin');
    assert.is(line.url, '/invites/[redacted]/revoke', segment);
  }
  const out = await admin(service, 'invite', 'revoke', token);
  assert.is(out.code, 1);
  assert.match(out.stderr, /400: .*not its id/);
  assert.not.ok(out.stderr.includes(secret.slice(0, 12)), out.stderr);
  // Pasted onto the public listener too, the token is kept out of its log.
  assert.is((await service.get(`/v1/${token}`)).status, 404);
  assert.not.ok(JSON.stringify(service.logs).includes(secret.slice(0, 12)), 'the token reached a log line');
  const listed = (await service.admin('GET', '/invites')).json.invites.find((i: { id: string }) => i.id === record.id);
  assert.is(listed.status, 'open');
  assertHtmlPage((await openInvite(url)).page, 200);
  // Ids are still echoed, and what is neither an id nor a token is a plain 404.
  const unknown = await service.admin('POST', '/invites/inv_0000000000000000/revoke');
  assert.equal([unknown.status, unknown.json.error], [404, 'No invite has the id inv_0000000000000000']);
  assert.is((await service.admin('POST', '/invites/whatever/revoke')).status, 404);
});

test('a link made before tokens had their own prefix (inv_ + 43 characters) still claims its invite', async () => {
  const stateDir = await tempDir();
  const token = `inv_${randomBytes(32).toString('base64url')}`;
  const record = {
    id: 'inv_00000000000000aa',
    hash: hashToken(token),
    client: 'Early Adopter',
    created_at: new Date(now).toISOString(),
    expires_at: new Date(now + 86_400_000).toISOString(),
    replaces: null,
    claimed_at: null,
    key_id: null,
    revoked_at: null,
  };
  await fs.writeFile(path.join(stateDir, 'invites.json'), JSON.stringify({ invites: [record] }));
  const older = await startTestService({ dataDir: service.dataDir, stateDir, clock: () => now });
  try {
    const key = shownKey((await claim(`${older.url}/claim/${token}`)).text);
    assert.ok(key, 'the old link shows a key');
    assert.is((await older.get('/v1/catalog', { key })).status, 200);
    assert.is((await older.admin('POST', `/invites/${record.id}/revoke`)).status, 409, 'its id is still an id');
  } finally {
    await older.stop();
    await fs.rm(stateDir, { recursive: true, force: true });
  }
});

test('--replaces revokes the old key when the invite is claimed: how a lost key is replaced', async () => {
  const old = (await service.admin('POST', '/keys', { client: 'Forgetful' })).json;
  const out = await admin(service, 'invite', 'create', '--client', 'Forgetful', '--replaces', old.record.id);
  assert.is(out.code, 0, out.stderr);
  assert.is((await service.get('/v1/catalog', { key: old.key })).status, 200, 'the old key works until the claim');
  const key = shownKey((await claim(lastLine(out.stdout))).text)!;
  assert.is((await service.get('/v1/catalog', { key })).status, 200);
  assert.is((await service.get('/v1/catalog', { key: old.key })).status, 401);
  const unknown = await service.admin('POST', '/invites', { client: 'x', replaces: 'key_0000000000000000' });
  assert.is(unknown.status, 400);
  assert.equal(unknown.json.details.fieldErrors.replaces, ['No key has the id key_0000000000000000']);
});

test('invite create refuses bad input with the field and the fix; revoking a claimed invite is a 409', async () => {
  const long = await service.admin('POST', '/invites', { client: 'x', expires: '91d' });
  assert.is(long.status, 400);
  assert.match(long.json.details.fieldErrors.expires[0], /At most 90d/);
  const out = await admin(service, 'invite', 'create', '--client', 'x', '--expires', 'soon');
  assert.is(out.code, 1);
  assert.match(out.stderr, /expires: Expected a duration such as 30m, 12h or 7d/);
  const { url, invite: record } = await invite();
  await claim(url);
  const conflict = await service.admin('POST', `/invites/${record.id}/revoke`);
  assert.is(conflict.status, 409);
  assert.match(conflict.json.error, /already claimed/);
});

test.run();

const guard = suite('claim page: brute-force guard');
let guarded: TestService;
guard.before(async () => {
  guarded = await startTestService({ env: { CLAIM_GUARD_PER_MINUTE: '3' } });
});
guard.after(() => guarded.stop());

guard('invalid tokens from one address get 429 after CLAIM_GUARD_PER_MINUTE; a valid invite still works', async () => {
  const spent = (await guarded.admin('POST', '/invites', { client: 'Double Clicker' })).json.url;
  assert.is((await claim(spent)).status, 200);
  for (let i = 0; i < 5; i++) assert.is((await send(spent)).status, 410, 'a spent real token is no guess: never 429');
  const bogus = `${guarded.url}/claim/inv_${'B'.repeat(43)}`;
  for (let i = 0; i < 3; i++) assert.is((await send(bogus)).status, 404);
  const refused = await send(bogus);
  assertHtmlPage(refused, 429);
  assert.match(String(refused.headers['retry-after']), /^\d+$/);
  assert.match(refused.text, /Too many attempts/);
  const { url } = (await guarded.admin('POST', '/invites', { client: 'Innocent' })).json;
  const res = await claim(url);
  assert.is(res.status, 200);
  assert.ok(shownKey(res.text));
});
guard.run();
