import { gzipSync } from 'node:zlib';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { send, startTestService, type TestService } from './helpers/service.ts';

// GET /explore over HTTP: public (no key), strict CSP, a short cache for the HTML and a
// year's for its hashed files, and the JavaScript within issue 43's 150 kB gzipped.

const test = suite('explore page over HTTP');
let service: TestService;
test.before(async () => {
  service = await startTestService();
});
test.after(async () => {
  await service?.stop();
});

// The page is no operation of the API, so not in docs/openapi.json (as the claim page is not): sent without the document's check, and without a key.
const get = (pathAndQuery: string) => send(`${service.url}${pathAndQuery}`);

const directives = (csp: string) =>
  new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/) as [string, ...string[]])
      .map(([k, ...v]) => [k, v.join(' ')]),
  );

test('every view is the same HTML, with no key, a short cache and a strict CSP', async () => {
  const first = await get('/explore');
  for (const view of [
    '/explore',
    '/explore/',
    '/explore/financials?metric=ggr',
    '/explore/reference',
    '/explore/aggregate?metric=ggr&group_by=year',
    '/explore/revisions',
  ]) {
    const res = await get(view);
    assert.is(res.status, 200, view);
    assert.match(String(res.headers['content-type']), /^text\/html/, view);
    assert.is(res.headers['cache-control'], 'no-cache', view);
    assert.is(res.headers['x-content-type-options'], 'nosniff', view);
    assert.is(res.text, first.text, view);
    const csp = directives(String(res.headers['content-security-policy']));
    assert.is(csp.get('default-src'), "'self'", view);
    assert.is(csp.get('script-src'), "'self'", view);
    assert.is(csp.get('style-src'), "'self'", view);
    assert.is(csp.get('connect-src'), "'self'", view);
    assert.is(csp.get('frame-ancestors'), "'none'", view);
    assert.is(csp.get('object-src'), "'none'", view);
  }
  // Nothing inline for the CSP to refuse, and nothing from another host.
  assert.not.match(first.text, /<script(?![^>]*\ssrc=)[^>]*>/);
  assert.not.match(first.text, /\sstyle=|<style/);
  assert.not.match(first.text, /https?:\/\//);
});

test('the hashed scripts and styles: no key, cached for a year as immutable, JavaScript under 150 kB gzipped', async () => {
  const html = (await get('/explore')).text;
  const links = [...html.matchAll(/(?:src|href)="(\/explore\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  assert.is(links.length, 2, 'one script and one stylesheet');
  let scriptBytes = 0;
  for (const link of links) {
    assert.match(link, /\/explore-[A-Z0-9]{8}\.(js|css)$/, 'a content hash in the name');
    const res = await get(link);
    assert.is(res.status, 200, link);
    assert.is(res.headers['cache-control'], 'public, max-age=31536000, immutable', link);
    assert.is(res.headers['x-content-type-options'], 'nosniff', link);
    assert.match(String(res.headers['content-type']), link.endsWith('.js') ? /^text\/javascript/ : /^text\/css/, link);
    if (link.endsWith('.js')) {
      scriptBytes += gzipSync(Buffer.from(res.text), { level: 9 }).length;
      // Bundled from npm: no import of another file or host is left.
      assert.not.match(res.text, /https?:\/\/(?!www\.w3\.org\/)[a-z]/i, 'no address of another host');
    }
  }
  assert.ok(scriptBytes > 10_000 && scriptBytes <= 150 * 1024, `${scriptBytes} bytes of JavaScript, gzipped`);
  console.log(`explore: ${scriptBytes} bytes of JavaScript gzipped`);
});

test('other /explore paths are 404, and the data still needs the key', async () => {
  for (const missing of [
    '/explore/nope',
    '/explore/assets/explore-AAAAAAAA.js',
    '/explore/assets/',
    '/explore/financials/x',
    '/explorer',
  ]) {
    assert.is((await get(missing)).status, 404, missing);
  }
  assert.is((await get('/v1/aggregate?metric=ggr&group_by=year')).status, 401);
});

test('HEAD answers as GET does; another method is the JSON 405 naming GET and HEAD', async () => {
  const head = await send(`${service.url}/explore/aggregate`, { method: 'HEAD' });
  assert.is(head.status, 200);
  assert.match(String(head.headers['content-type']), /^text\/html/);
  assert.is(head.text, '');
  for (const path of ['/explore', '/explore/revisions/']) {
    const res = await send(`${service.url}${path}`, { method: 'POST' });
    assert.is(res.status, 405, path);
    assert.equal(res.json, { error: 'Method not allowed' }, path);
    assert.equal(String(res.headers.allow).split(', ').sort(), ['GET', 'HEAD'], path);
  }
  assert.is((await send(`${service.url}/explore/nope`, { method: 'POST' })).status, 404);
});

test.run();
