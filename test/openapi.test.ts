import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as errors from '../src/errors/index.ts';
import { examplePath } from '../src/http/openapi/examples.ts';
import { DOCUMENTED_RELEASES } from '../src/http/openapi/prefill.ts';
import { openApiText, openApiTextFor } from '../src/http/routes/index.ts';
import { DATASETS } from '../src/registry.ts';
import { CHROMIUM, CHROMIUM_ARGS, CHROMIUM_MISSING } from '../tools/chromium.ts';
import { openApi, validateResponse } from './helpers/openapi.ts';
import { FIXTURE_RELEASE, send, startTestService, type TestService, tempDir } from './helpers/service.ts';
import { requiring } from './helpers/skip.ts';

// The OpenAPI document: generated from the registry, the handlers' schemas and the
// error catalog; committed as docs/openapi.json and kept equal to what is served;
// rendered at /docs by Swagger UI from node_modules, checked in headless Chromium.

const ROOT = path.resolve(import.meta.dirname, '..');
let service: TestService;

const Doc = suite('openapi: the document');
Doc.before(async () => {
  service = await startTestService();
});
Doc.after(() => service.stop());

Doc('docs/openapi.json is the document the code generates', async () => {
  const committed = await fs.readFile(path.join(ROOT, 'docs/openapi.json'), 'utf8');
  assert.ok(committed === openApiText, 'docs/openapi.json is stale: run `npm run openapi` and commit it');
});

Doc('GET /openapi.json needs no key and serves that document, naming the one release this server has', async () => {
  const res = await send(`${service.url}/openapi.json`);
  assert.is(res.status, 200);
  // Its as_of examples are the instant that release was published, as /v1/releases says.
  const at = (await service.get('/v1/releases')).json.releases[0].published_at;
  assert.is(res.text, openApiTextFor({ latest: FIXTURE_RELEASE, previous: FIXTURE_RELEASE, latestAt: at, previousAt: at }));
  // As a release id, not as the start of a date (the instant this server's release was published may be in that month).
  assert.not.match(res.text, new RegExp(`${DOCUMENTED_RELEASES.latest}(?!-)`), `${DOCUMENTED_RELEASES.latest} is not this server's`);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.is(res.json.openapi, '3.1.0');
});

Doc('every dataset, every per-metric dimension and every metric is described', () => {
  const financials = openApi.paths['/v1/financials'].get;
  const params = new Map<string, any>(financials.parameters.map((p: any) => [p.name, p]));
  for (const def of DATASETS.filter((d) => d.kind === 'financial')) {
    for (const dimension of def.dimensions) {
      assert.ok(params.has(dimension), `${dimension} is a parameter`);
      const metrics = params.get(dimension)['x-metrics'];
      if (metrics) assert.ok(metrics.includes(def.name), `${dimension} applies to ${def.name}`);
    }
    const row = openApi.components.schemas[`${def.name}Row`];
    assert.equal(row.properties.values.required, def.metrics);
    assert.equal(row.properties.dimensions.required, def.dimensions);
  }
  assert.is(params.get('metric').required, true);
  assert.equal(params.get('limit').schema, { type: 'integer', minimum: 1, maximum: 1000, default: 100 });
  assert.is(params.get('period').schema.pattern, '^(\\d{4})-(\\d{2})-(\\d{2}):(\\d{4})-(\\d{2})-(\\d{2})$');
  assert.equal(params.get('fx_local_currency')['x-metrics'], ['fx']);
  assert.equal(openApi.components.securitySchemes.apiKey, {
    ...openApi.components.securitySchemes.apiKey,
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
  });
  // Headers are references to the components, which say they are required.
  const declared = (h: any) => (h.$ref ? openApi.components.headers[h.$ref.split('/').pop()] : h);
  for (const header of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit']) {
    assert.ok(declared(financials.responses['200'].headers[header]).required, header);
    assert.ok(declared(financials.responses['429'].headers[header]).required, header);
  }
  assert.ok(declared(financials.responses['429'].headers['Retry-After']).required);
});

Doc('every error a client can get from the data endpoints is an example, with the catalog’s own text', () => {
  const examples = JSON.stringify(openApi.paths);
  for (const err of [
    new errors.MissingKeyError(),
    new errors.InvalidKeyError(),
    new errors.DuplicateKeyHeaderError(),
    new errors.InvalidCursorError(),
    new errors.UnknownMetricError('revenue'),
    new errors.NotAcceptableError(['application/json', 'text/csv', 'application/vnd.apache.arrow.stream'], ['json', 'csv', 'arrow']),
    new errors.TooManyRequestsError(42),
    new errors.NotReadyError(),
    new errors.KeysUnavailableError(),
    new errors.InternalError(),
  ]) {
    assert.ok(examples.includes(JSON.stringify(err.body)), `${err.name} is an example`);
    assert.ok(openApi.paths['/v1/financials'].get.responses[String(err.status)], `${err.name}: status ${err.status} is documented`);
  }
});

Doc('every parameter example with a value is valid for its parameter (Spectral leaves parameter examples to this test)', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  let checked = 0;
  for (const [route, item] of Object.entries<any>(openApi.paths)) {
    // Webhook operations take no query examples: their parameters are ids.
    for (const parameter of item.get?.parameters ?? []) {
      const validate = ajv.compile(parameter.schema);
      const named = Object.entries<any>({ ...parameter.examples, ...parameter['x-examples'] }).filter(([, e]) => e.value !== undefined);
      for (const [name, value] of [
        ...(parameter.example === undefined ? [] : [['example', parameter.example]]),
        ...named.map(([n, e]) => [n, e.value]),
      ]) {
        assert.ok(validate(value), `${route} ${parameter.name} ${name}: ${ajv.errorsText(validate.errors)}`);
        checked++;
      }
    }
  }
  assert.ok(checked > 100, `${checked} examples checked`);
});

Doc('Swagger UI fills in exactly the example request: other parameters first offer "not sent", then their examples', () => {
  for (const [route, item] of Object.entries<any>(openApi.paths)) {
    const operation = item.get;
    // Only the data routes have an example request (/v1/webhooks is managed with bodies).
    if (operation?.['x-codeSamples'] === undefined) continue;
    const sent = new URL(examplePath(operation)!, 'http://x').searchParams;
    for (const parameter of operation.parameters ?? []) {
      if (sent.has(parameter.name)) {
        const each = parameter.schema.items ?? parameter.schema;
        const want = sent.getAll(parameter.name).map((v) => (each.type === 'integer' ? Number(v) : v));
        assert.equal([parameter.example].flat(), want, `${route} ${parameter.name} is filled with the example request's value`);
        assert.is(parameter.examples, undefined);
        // Its other examples, which OpenAPI allows no `examples` beside `example` to hold.
        for (const e of Object.values<any>(parameter['x-examples'] ?? {})) assert.ok(e.value !== undefined && e['x-request'], route);
        continue;
      }
      assert.is(parameter.example, undefined, `${route} ${parameter.name} is not filled in`);
      const [first, ...others] = Object.entries<any>(parameter.examples);
      assert.equal(first, ['not sent', { summary: first![1].summary }], `${route} ${parameter.name}: "not sent" first, without a value`);
      assert.ok(others.length > 0 && others.every(([, e]) => e.value !== undefined), `${route} ${parameter.name} offers its examples`);
    }
  }
});

Doc('the response validator refuses what the document does not describe', () => {
  const ok = { status: 200, headers: {}, text: '', json: {} };
  const limits = {
    'x-ratelimit-limit': '100',
    'x-ratelimit-remaining': '99',
    'x-ratelimit-reset': '60',
    'ratelimit-policy': '"minute";q=100;w=60',
    ratelimit: '"minute";r=99;t=60',
  };
  const cases: Array<[string, any]> = [
    ['an undocumented status', { ...ok, status: 418, headers: limits }],
    [
      'a missing rate-limit header',
      { ...ok, headers: { 'content-type': 'application/json', etag: '"x"', 'cache-control': 'x', vary: 'Accept' } },
    ],
    [
      'a body of another shape',
      {
        ...ok,
        headers: { ...limits, 'content-type': 'application/json', etag: '"x"', 'cache-control': 'x', vary: 'Accept' },
        json: { data: 'no' },
      },
    ],
    [
      'a non-integer limit header',
      {
        ...ok,
        status: 401,
        headers: { ...limits, 'x-ratelimit-remaining': 'many', 'content-type': 'application/json' },
        json: { error: 'x' },
      },
    ],
    [
      'an error with an extra field',
      { ...ok, status: 400, headers: { ...limits, 'content-type': 'application/json' }, json: { error: 'x', extra: 1 } },
    ],
  ];
  for (const [name, res] of cases) assert.throws(() => validateResponse('GET', '/v1/financials?metric=ggr', res), name);
  assert.throws(() => validateResponse('GET', '/v1/nowhere', { ...ok }), 'a success off the document');
  validateResponse('GET', '/v1/nowhere', { ...ok, status: 404, json: { error: 'Not found' } });
});

Doc('Stoplight Spectral with spectral:oas finds nothing in docs/openapi.json: no error and no warning', async () => {
  const root = path.resolve(import.meta.dirname, '..');
  const bin = path.join(root, 'node_modules', '.bin', 'spectral');
  const run = promisify(execFile);
  const result = await run(
    bin,
    ['lint', 'docs/openapi.json', '--ruleset', '.spectral.yaml', '--fail-severity', 'warn', '--format', 'text'],
    { cwd: root, timeout: 120_000 },
  ).then(
    ({ stdout }) => ({ ok: true, stdout }),
    (err: { stdout?: string; message: string }) => ({ ok: false, stdout: err.stdout ?? err.message }),
  );
  assert.ok(result.ok, `Spectral reports:\n${result.stdout}`);
});

Doc.run();

// ---------------------------------------------------------------------------------

const Page = suite('openapi: the /docs page in headless Chromium');
let profile: string;
Page.before(async () => {
  service = await startTestService();
  profile = await tempDir('dqs-chromium-');
});
Page.after(async () => {
  await service.stop();
  await fs.rm(profile, { recursive: true, force: true });
});

Page('GET /docs: HTML with a self-only CSP, no key needed; its assets come from node_modules', async () => {
  const res = await send(`${service.url}/docs`);
  assert.is(res.status, 200);
  assert.match(String(res.headers['content-type']), /^text\/html/);
  assert.match(String(res.headers['content-security-policy']), /^default-src 'self';/);
  for (const asset of [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)) {
    assert.ok(asset.startsWith('/docs/'), `${asset} is served here`);
    assert.is((await send(`${service.url}${asset}`)).status, 200, asset);
  }
});

const withChromium = requiring(Page, CHROMIUM_MISSING, 'the /docs page in headless Chromium');

withChromium('Chromium renders every operation from /openapi.json, loading nothing from elsewhere and breaking no CSP rule', async () => {
  const { chromium } = await import('playwright-core');
  // A fresh profile (--user-data-dir) per run: playwright takes it as launchPersistentContext's first argument.
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: [...CHROMIUM_ARGS],
    viewport: { width: 1280, height: 900 },
  });
  try {
    const page = await browser.newPage();
    const origin = new URL(service.url).origin;
    const elsewhere: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(origin) && !request.url().startsWith('data:')) elsewhere.push(request.url());
    });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (err) => problems.push(String(err)));
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(`${service.url}/docs`);
    await page.waitForSelector('.opblock-summary-path', { timeout: 30_000 });
    const paths = await page.$$eval('.opblock-summary-path', (nodes) => nodes.map((n) => n.getAttribute('data-path')));
    assert.equal(new Set(paths), new Set([...Object.keys(openApi.paths), ...Object.keys(openApi.webhooks)]));
    assert.equal(elsewhere, [], 'nothing loaded from another origin');
    assert.equal(problems, [], 'no script error or CSP violation');
    await page.click('#operations-data-getFinancials .opblock-summary');
    await page.waitForSelector('.parameters-container');
    await fs.mkdir(path.join(ROOT, 'tmp'), { recursive: true });
    await page.screenshot({ path: path.join(ROOT, 'tmp', 'docs-page.png'), fullPage: false });
  } finally {
    await browser.close();
  }
});

Page.run();
