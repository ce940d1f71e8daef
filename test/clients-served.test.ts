import fs from 'node:fs/promises';
import { request } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CLIENT_LANGUAGES, CLIENT_PACKAGES, clientPath } from '../src/clients.ts';
import { SERVICE_VERSION } from '../src/version.ts';
import { CHROMIUM_MISSING } from '../tools/chromium.ts';
import { builtClients } from './helpers/clients.ts';
import { type ExploreSession, exploreSession, seriousViolations } from './helpers/explore-browser.ts';
import { send, startTestService, type TestService } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';

// GET /clients/<language>/<file>: the packages `npm run build` writes, served from
// CLIENTS_DIR with no key, cached for good by version, `latest` redirecting to the
// current one, and a JSON 404 for any other version or an unbuilt package.

const test = suite<{ service: TestService; dir: string; tarball: string }>('clients served');

test.before(async (context) => {
  const { dir, tarball } = await builtClients();
  context.dir = dir;
  context.tarball = tarball;
  context.service = await startTestService({ env: { CLIENTS_DIR: dir } });
});

test.after(async ({ service }) => {
  await service?.stop();
});

const typescriptPath = clientPath('typescript', SERVICE_VERSION);

test('the TypeScript package is the built file, with no key, cached for good, with an ETag', async ({ service, tarball }) => {
  const res = await request(`${service.url}${typescriptPath}`);
  const body = Buffer.from(await res.body.arrayBuffer());
  assert.is(res.statusCode, 200);
  assert.ok(body.equals(await fs.readFile(tarball)), 'the bytes of dist/clients/typescript/…tgz');
  assert.is(res.headers['cache-control'], 'public, max-age=31536000, immutable');
  assert.is(res.headers['content-type'], 'application/gzip');
  assert.match(String(res.headers.etag), /^"[\w-]{22}"$/);
  assert.is(res.headers['content-disposition'], `attachment; filename="data-query-client-${SERVICE_VERSION}.tgz"`);
});

test('If-None-Match with its ETag answers 304 with no body; another ETag gets the file', async ({ service }) => {
  const { headers } = await send(`${service.url}${typescriptPath}`);
  const etag = String(headers.etag);
  const again = await send(`${service.url}${typescriptPath}`, { headers: { 'if-none-match': etag } });
  assert.is(again.status, 304);
  assert.is(again.text, '');
  assert.is(again.headers.etag, etag);
  assert.is(again.headers['cache-control'], 'public, max-age=31536000, immutable');
  const other = await send(`${service.url}${typescriptPath}`, { headers: { 'if-none-match': '"something-else"' } });
  assert.is(other.status, 200);
});

test('each `latest` name answers 302 to the versioned file', async ({ service }) => {
  for (const language of CLIENT_LANGUAGES) {
    const res = await send(`${service.url}/clients/${language}/${CLIENT_PACKAGES[language].file('latest')}`);
    assert.is(res.status, 302, language);
    assert.is(res.headers.location, clientPath(language, SERVICE_VERSION), language);
  }
  assert.equal(
    CLIENT_LANGUAGES.map((language) => clientPath(language, 'latest')),
    [
      '/clients/typescript/data-query-client-latest.tgz',
      '/clients/python/dqs_client-latest-py3-none-any.whl',
      '/clients/r/dqs_latest.tar.gz',
    ],
  );
});

test('another version, or a file that is no package, is a JSON 404 naming the served file', async ({ service }) => {
  for (const path of [
    '/clients/typescript/data-query-client-0.0.1.tgz',
    '/clients/python/dqs_client-9.9.9-py3-none-any.whl',
    '/clients/r/x',
  ]) {
    const res = await service.get(path, { key: null });
    assert.is(res.status, 404, path);
    const language = path.split('/')[2] as keyof typeof CLIENT_PACKAGES;
    assert.ok(res.json.error.includes(`serves ${clientPath(language, SERVICE_VERSION)}`), res.json.error);
  }
  const unknown = await service.get('/clients/cobol/dqs_0.1.0.tar.gz', { key: null });
  assert.is(unknown.status, 404);
  assert.match(unknown.json.error, /the clients are typescript, python, r/);
});

test('a package this server has not built is a 404 naming `npm run build`', async ({ service }) => {
  // The helper builds only the TypeScript package: the Python one is absent from CLIENTS_DIR.
  const res = await service.get(clientPath('python', SERVICE_VERSION), { key: null });
  assert.is(res.status, 404);
  assert.match(res.json.error, /not built on this server: `npm run build` builds it/);
});

test("the front door gives each package's URL on this server and the line installing it", async ({ service }) => {
  const res = await service.get('/', { key: null });
  assert.is(res.status, 200);
  const url = (language: (typeof CLIENT_LANGUAGES)[number]) => `${service.url}${clientPath(language, SERVICE_VERSION)}`;
  assert.equal(res.json.clients, {
    typescript: { url: url('typescript'), install: `npm install ${url('typescript')}` },
    python: { url: url('python'), install: `pip install ${url('python')}` },
    r: { url: url('r'), install: `install.packages("${url('r')}", repos = NULL, type = "source")` },
  });
  assert.is((await send(res.json.clients.typescript.url)).status, 200);
});

test("the packages' version is the OpenAPI document's info.version", async ({ service }) => {
  const { json } = await service.get('/openapi.json', { key: null });
  assert.is(json.info.version, SERVICE_VERSION);
  assert.ok(typescriptPath.endsWith(`-${json.info.version}.tgz`));
});

test.run();

if (CHROMIUM_MISSING) {
  skippedSuite('install lines in the browser', CHROMIUM_MISSING);
} else {
  const browser = suite<{ session: ExploreSession; installs: string[] }>('install lines in the browser');

  browser.before(async (context) => {
    context.session = await exploreSession();
    const { json } = await context.session.service.get('/', { key: null });
    context.installs = Object.values<{ install: string }>(json.clients).map(({ install }) => install);
  });

  browser.after(async ({ session }) => {
    await session?.close();
  });

  browser('the Explore page\'s "Copy as" panel shows the front door\'s install lines', async ({ session, installs }) => {
    const { page, service } = session;
    await page.goto(`${service.url}/explore/aggregate?metric=ggr&fx=USD&group_by=region`);
    const lines = page.locator('#client-installs');
    await page.waitForFunction(() => document.querySelector('#client-installs')?.textContent !== '', undefined, { timeout: 30_000 });
    assert.is(await lines.textContent(), installs.join('\n'));
    assert.equal(await seriousViolations(page), [], 'axe on the view with its copy panel');
  });

  browser('/docs lists the same install lines above the reference', async ({ session, installs }) => {
    const { page, service } = session;
    await page.goto(`${service.url}/docs`);
    await page.locator('#client-installs li').nth(2).waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('#client-installs code').allTextContents(), installs);
  });

  browser.run();
}
