import { parseAtomFeed, parseJsonFeed } from 'feedsmith';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rollback } from '../etl/releases.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { PUBLISHED, R1, R2, R3, ROLLED_BACK, type Vintages, vintages } from './helpers/vintages.ts';

// GET /v1/releases.atom and /v1/releases.json: the publication log as feeds, read by a
// real feed parser (feedsmith), without a key; a rollback adds an entry; ETag and 304;
// FEED_PUBLIC=false makes them need a key like any other path.

const test = suite('release feeds');
let v: Vintages;
let service: TestService;
test.before(async () => {
  v = await vintages({ rolledBack: false });
  service = await startTestService({ dataDir: v.dataDir, env: { RELEASE_POLL_MS: '100', PUBLIC_URL: 'https://data.example.com/api' } });
});
test.after(async () => {
  await service?.stop();
  await v?.remove();
});

const BASE = 'https://data.example.com/api';
const keyless = { key: null };

/** The path of a link the service wrote under PUBLIC_URL, to ask the service itself. */
const local = (href: string) => {
  assert.ok(href.startsWith(`${BASE}/`), href);
  return href.slice(BASE.length);
};

test('the Atom feed parses, with the feed and entry elements RFC 4287 asks for, one entry per publication, newest first', async () => {
  const res = await service.get('/v1/releases.atom', keyless);
  assert.is(res.status, 200, res.text);
  assert.is(res.headers['content-type'], 'application/atom+xml; charset=utf-8');
  const feed = parseAtomFeed(res.text);
  assert.is(feed.id, `${BASE}/v1/releases.atom`);
  assert.is(feed.title?.value, 'Data releases');
  assert.is(feed.updated, PUBLISHED[R3]);
  assert.is(feed.authors?.[0]?.name, 'data-query-service');
  assert.equal(
    feed.links?.find((l) => l.rel === 'self'),
    { href: `${BASE}/v1/releases.atom`, rel: 'self', type: 'application/atom+xml' },
  );
  const entries = feed.entries ?? [];
  assert.equal(
    entries.map((e) => [e.id, e.updated]),
    [
      [`${BASE}/v1/releases#msg_3`, PUBLISHED[R3]],
      [`${BASE}/v1/releases#msg_2`, PUBLISHED[R2]],
      [`${BASE}/v1/releases#msg_1`, PUBLISHED[R1]],
    ],
  );
  for (const entry of entries) assert.ok(entry.title?.value, entry.id);
  const [newest] = entries;
  assert.is(newest!.links?.find((l) => l.rel === 'alternate')?.href, `${BASE}/v1/catalog?release=${R3}`);
  // R3 against R2 (test/helpers/vintages.ts): A removed, C added, D changed back.
  assert.match(String(newest!.summary?.value), /ggr: 1 added, 1 removed, 1 changed/);
  assert.match(String(newest!.summary?.value), /turnover: no change/);
  // The links answer, with a key.
  const catalog = await service.get(local(newest!.links!.find((l) => l.rel === 'alternate')!.href!));
  assert.is(catalog.status, 200, catalog.text);
  const revisions = newest!.links!.filter((l) => l.rel === 'related');
  const ggr = revisions.find((l) => l.title === 'Revisions of ggr')!;
  const diff = await service.get(local(ggr.href!));
  assert.is(diff.status, 200, diff.text);
  assert.is(diff.json.data.length, 3);
});

test('the JSON Feed parses as 1.1 and carries each event whole', async () => {
  const res = await service.get('/v1/releases.json', keyless);
  assert.is(res.status, 200, res.text);
  assert.is(res.headers['content-type'], 'application/feed+json; charset=utf-8');
  assert.is(res.json.version, 'https://jsonfeed.org/version/1.1');
  const feed = parseJsonFeed(res.json);
  assert.is(feed.feed_url, `${BASE}/v1/releases.json`);
  assert.equal(
    feed.items!.map((i) => [i.id, i.date_published, i.url]),
    [
      [`${BASE}/v1/releases#msg_3`, PUBLISHED[R3], `${BASE}/v1/catalog?release=${R3}`],
      [`${BASE}/v1/releases#msg_2`, PUBLISHED[R2], `${BASE}/v1/catalog?release=${R2}`],
      [`${BASE}/v1/releases#msg_1`, PUBLISHED[R1], `${BASE}/v1/catalog?release=${R1}`],
    ],
  );
  const event = res.json.items[0]._release_event;
  assert.is(event.type, 'release.published');
  assert.equal([event.data.release, event.data.previous], [R3, R2]);
  assert.equal(event.data.changes.ggr, { added: 1, removed: 1, changed: 1 });
  assert.is(event.data.links.revisions.ggr, `${BASE}/v1/revisions?metric=ggr&from=${R2}&to=${R3}`);
});

test('ETag and 304; /v1/releases is still its own path and needs a key; a suffix the service has no feed for is a 404', async () => {
  for (const path of ['/v1/releases.atom', '/v1/releases.json']) {
    const first = await service.get(path, keyless);
    const etag = String(first.headers.etag);
    assert.ok(etag.startsWith('"'), etag);
    const again = await service.get(path, { key: null, headers: { 'if-none-match': etag } });
    assert.is(again.status, 304);
    assert.is(again.text, '');
  }
  const atom = await service.get('/v1/releases.atom', keyless);
  const json = await service.get('/v1/releases.json', keyless);
  assert.is.not(atom.headers.etag, json.headers.etag);
  assert.is((await service.get('/v1/releases', keyless)).status, 401);
  const list = await service.get('/v1/releases');
  assert.is(list.status, 200);
  assert.ok(Array.isArray(list.json.releases));
  assert.is((await service.get('/v1/releases.xml')).status, 404);
  assert.is((await service.get('/v1/releases.rss', keyless)).status, 401);
  assert.is((await service.get('/v1/releases.atom?limit=1', keyless)).status, 400);
});

test('a rollback adds an entry: the withdrawal, newest, with its counts; the old ETag no longer matches', async () => {
  const before = await service.get('/v1/releases.atom', keyless);
  await rollback(v.dataDir, R2, () => new Date(ROLLED_BACK));
  // Until the service has seen the switch (RELEASE_POLL_MS=100), a bounded number of polls.
  let entries = parseAtomFeed(before.text).entries ?? [];
  let res = before;
  for (let i = 0; i < 600 && entries.length < 4; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    res = await service.get('/v1/releases.atom', keyless);
    entries = parseAtomFeed(res.text).entries ?? [];
  }
  assert.is(entries.length, 4);
  const [withdrawal] = entries;
  assert.is(withdrawal!.id, `${BASE}/v1/releases#msg_4`);
  assert.is(withdrawal!.updated, ROLLED_BACK);
  assert.equal(
    withdrawal!.categories?.map((c) => c.term),
    ['release.withdrawn'],
  );
  assert.match(String(withdrawal!.title?.value), new RegExp(`${R3} withdrawn`));
  // R3 → R2: A back, C gone, D changed again.
  assert.match(String(withdrawal!.summary?.value), /ggr: 1 added, 1 removed, 1 changed/);
  assert.is(withdrawal!.links?.find((l) => l.rel === 'alternate')?.href, `${BASE}/v1/catalog?release=${R2}`);
  assert.is(parseAtomFeed(res.text).updated, ROLLED_BACK);
  const stale = await service.get('/v1/releases.atom', { key: null, headers: { 'if-none-match': String(before.headers.etag) } });
  assert.is(stale.status, 200);
  const json = await service.get('/v1/releases.json', keyless);
  const event = json.json.items[0]._release_event;
  assert.equal([event.type, event.data.release, event.data.previous, event.data.links.revisions], ['release.withdrawn', R3, R2, null]);
  assert.equal(event.data.changes.ggr, { added: 1, removed: 1, changed: 1 });
});

test('FEED_PUBLIC=false: the feeds need a key like any other path', async () => {
  const closed = await startTestService({ dataDir: v.dataDir, env: { FEED_PUBLIC: 'false' } });
  try {
    for (const path of ['/v1/releases.atom', '/v1/releases.json', '/V1/Releases.ATOM/']) {
      const refused = await closed.get(path, keyless);
      assert.is(refused.status, 401, path);
      assert.is(refused.json.error, 'Missing x-api-key header');
    }
    const res = await closed.get('/v1/releases.atom');
    assert.is(res.status, 200);
    // Without PUBLIC_URL, links are under the address the request came to.
    assert.is(parseAtomFeed(res.text).id, `${closed.url}/v1/releases.atom`);
  } finally {
    await closed.stop();
  }
});

test.run();
