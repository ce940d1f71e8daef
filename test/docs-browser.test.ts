import fs from 'node:fs/promises';
import type { BrowserContext, Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { examplePath } from '../src/http/openapi/examples.ts';
import { CHROMIUM, CHROMIUM_ARGS, CHROMIUM_MISSING } from '../tools/chromium.ts';
import { send, startTestService, type TestService, tempDir, twoReleaseDataDir } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';

// Swagger UI's "Try it out" as a new user tries it (issue 44 item 1): /docs in headless
// Chromium, an API key typed into "Authorize", then for every operation "Try it out"
// and "Execute" with nothing changed. Every answer must be 200, and the request
// Swagger UI sent must be the operation's example request (plus the defaults it fills
// in): the parameters it fills are the ones that work together (src/http/openapi/prefill.ts).
// On a server with one release and on one with two, since /v1/revisions' example names
// the server's own releases.

interface Executed {
  readonly operation: string;
  readonly status: number;
  readonly url: string;
  readonly key: string | undefined;
}

/** Authorizes with `key` in Swagger UI's dialog. */
async function authorize(page: Page, key: string): Promise<void> {
  await page.click('.auth-wrapper .authorize');
  const dialog = page.locator('.modal-ux');
  await dialog.locator('input').fill(key);
  await dialog.locator('button.authorize').click();
  await dialog.locator('button.btn-done').click();
}

/** Opens `operationId`'s block, presses "Try it out" then "Execute", and returns the answer the page received. */
async function execute(page: Page, path: string, operationId: string, tag: string): Promise<Executed> {
  const block = page.locator(`#operations-${tag}-${operationId}`);
  await block.locator('.opblock-summary').first().click();
  await block.locator('.try-out__btn').click();
  const answered = page.waitForResponse((res) => new URL(res.url()).pathname === path && res.request().resourceType() === 'fetch', {
    timeout: 60_000,
  });
  await block.locator('.execute').click();
  const res = await answered;
  // Closed again, so the next block's selectors find one "Execute" on the page.
  await block.locator('.opblock-summary').first().click();
  return { operation: operationId, status: res.status(), url: res.url(), key: res.request().headers()['x-api-key'] };
}

/** Each of `sent`'s parameters is one the example request names, with its value, or one Swagger UI fills from its schema's default. */
function sentAsDocumented(sent: URL, operation: any): string[] {
  const example = new URL(examplePath(operation)!, 'http://x').searchParams;
  const defaults = new Map<string, string>(
    (operation.parameters ?? []).filter((p: any) => p.schema.default !== undefined).map((p: any) => [p.name, String(p.schema.default)]),
  );
  const wrong: string[] = [];
  for (const name of new Set([...example.keys(), ...sent.searchParams.keys()])) {
    const got = sent.searchParams.getAll(name).join(',');
    const want = example.has(name) ? example.getAll(name).join(',') : defaults.get(name);
    if (got !== want) wrong.push(`${name}: sent ${got || '(nothing)'}, documented ${want ?? '(nothing)'}`);
  }
  return wrong;
}

if (CHROMIUM_MISSING) {
  skippedSuite('/docs: Try it out, Execute in headless Chromium', CHROMIUM_MISSING);
} else {
  const test = suite('/docs: Try it out, Execute in headless Chromium');
  let browser: BrowserContext;
  let profile: string;
  test.before(async () => {
    const { chromium } = await import('playwright-core');
    profile = await tempDir('dqs-chromium-');
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_ARGS],
      viewport: { width: 1280, height: 900 },
      timeout: 60_000,
    });
  });
  test.after(async () => {
    await browser?.close();
    if (profile) await fs.rm(profile, { recursive: true, force: true });
  });

  const servers: Array<[string, () => Promise<TestService>]> = [
    ['one release', () => startTestService()],
    ['two releases', async () => startTestService({ dataDir: (await twoReleaseDataDir()).dataDir })],
  ];
  for (const [name, start] of servers) {
    test(`with ${name}: every operation, executed with what Swagger UI fills in and an API key authorized, answers 200`, async () => {
      const service = await start();
      const page = await browser.newPage();
      try {
        const document = (await send(`${service.url}/openapi.json`)).json;
        await page.goto(`${service.url}/docs`);
        await page.waitForSelector('.opblock-summary-path', { timeout: 60_000 });
        await authorize(page, service.key);
        const executed: Executed[] = [];
        for (const [path, item] of Object.entries<any>(document.paths)) {
          const operation = item.get;
          // /v1/webhooks is tested in test/webhooks.test.ts: making one needs a receiver that answers.
          if (path.startsWith('/v1/webhooks')) continue;
          const done = await execute(page, path, operation.operationId, operation.tags[0]);
          executed.push(done);
          assert.equal(sentAsDocumented(new URL(done.url), operation), [], `${path}: what Swagger UI sent`);
          // A key is needed by default, optional where `security` offers it beside none (the feeds), and not sent where it offers none.
          const keyed = operation.security === undefined || operation.security.some((s: object) => 'apiKey' in s);
          assert.is(done.key, keyed ? service.key : undefined, `${path}: the key is sent where it is needed`);
        }
        const failed = executed.filter((e) => e.status !== 200).map((e) => `${e.operation}: ${e.status} ${e.url}`);
        assert.equal(failed, [], 'every Execute answers 200');
        assert.is(executed.length, Object.keys(document.paths).filter((route) => !route.startsWith('/v1/webhooks')).length);
      } finally {
        await page.close();
        await service.stop();
      }
    });
  }
  test.run();
}
