import fs from 'node:fs';
import path from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CHROMIUM, CHROMIUM_ARGS, CHROMIUM_MISSING } from '../tools/chromium.ts';
import { startTestService, type TestService, tempDir } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';

// The claim flow in a real browser: Debian's Chromium, headless, driven through
// playwright-core. It also takes the screenshots README shows (docs/img/).

// Screenshots are always taken; they replace the committed ones in docs/img only with
// UPDATE_SCREENSHOTS=1, so an ordinary test run leaves the work tree clean.
const UPDATE = process.env.UPDATE_SCREENSHOTS === '1';

if (CHROMIUM_MISSING) {
  skippedSuite('claim page in headless Chromium', CHROMIUM_MISSING);
} else {
  const test = suite('claim page in headless Chromium');
  let service: TestService;
  let profile: string;
  let browser: BrowserContext;
  let images: string;
  test.before(async () => {
    images = UPDATE ? path.resolve(import.meta.dirname, '../docs/img') : await tempDir('dqs-screenshots-');
    service = await startTestService();
    profile = await tempDir('dqs-chromium-');
    // A persistent context is how a fresh --user-data-dir is given to Chromium.
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_ARGS],
      viewport: { width: 480, height: 820 },
      timeout: 60_000,
    });
    await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: service.url });
  });
  test.after(async () => {
    await browser?.close();
    await service?.stop();
    if (profile) await fs.promises.rm(profile, { recursive: true, force: true });
    if (images && !UPDATE) await fs.promises.rm(images, { recursive: true, force: true });
  });

  const invite = async (client: string) => (await service.admin('POST', '/invites', { client })).json.url as string;

  test('open the invite link, click the button, read the key, use it; a reload shows no key', async () => {
    const url = await invite('Acme Analytics');
    const page = await browser.newPage();
    await page.goto(url);
    assert.is(await page.title(), 'Claim your API key · Data Query Service');
    assert.match(await page.locator('main').innerText(), /This invite is for Acme Analytics/);
    await page.screenshot({ path: path.join(images, 'claim-page.png'), fullPage: true });

    await page.getByRole('button', { name: 'Claim Your API Key' }).click();
    const field = page.getByLabel('API key for Acme Analytics');
    const key = await field.inputValue();
    assert.match(key, /^sk_live_[0-9A-Za-z]{40}$/);
    assert.match(await page.getByRole('alert').innerText(), /cannot be shown again/);
    await page.getByRole('button', { name: 'Copy' }).click();
    // The copy is asynchronous: wait for its confirmation (fails after 5 s).
    await page.getByRole('status').filter({ hasText: 'Copied to the clipboard.' }).waitFor({ timeout: 5000 });
    assert.is(await page.evaluate(() => navigator.clipboard.readText()), key);
    await page.screenshot({ path: path.join(images, 'claim-key.png'), fullPage: true });

    const res = await fetch(`${service.url}/v1/catalog`, { headers: { 'x-api-key': key } });
    assert.is(res.status, 200);
    assert.ok(((await res.json()) as { datasets: unknown[] }).datasets.length > 0);

    // A reload sends the form again: the invite is spent, so the key is not shown.
    const reloaded = await page.reload();
    assert.is(reloaded?.status(), 410);
    assert.not.ok((await page.content()).includes(key));
    const reopened = await page.goto(url);
    assert.is(reopened?.status(), 410);
    assert.match(await page.locator('main').innerText(), /already been used[\s\S]*ask the operator for a new invite/);
    assert.not.ok((await page.content()).includes(key));
    await page.close();
  });

  test('keyboard only: Tab reaches the button with a visible focus ring, Enter claims, Tab reaches the key and Copy', async () => {
    const url = await invite('Keyboard User');
    const page = await browser.newPage();
    await page.goto(url);
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement;
      return { text: el.textContent, outline: getComputedStyle(el).outlineStyle, width: getComputedStyle(el).outlineWidth };
    });
    assert.equal(focused, { text: 'Claim Your API Key', outline: 'solid', width: '3px' });
    await Promise.all([page.waitForURL(url), page.keyboard.press('Enter')]);
    await page.getByLabel('API key for Keyboard User').waitFor();
    await page.keyboard.press('Tab');
    assert.is(await page.evaluate(() => document.activeElement?.id), 'key');
    await page.keyboard.press('Tab');
    assert.is(await page.evaluate(() => document.activeElement?.textContent), 'Copy');
    await page.keyboard.press('Enter');
    // The copy is asynchronous: wait for its confirmation (fails after 5 s).
    await page.getByRole('status').filter({ hasText: 'Copied to the clipboard.' }).waitFor({ timeout: 5000 });
    await page.close();
  });

  test('readable on a phone: at 320 px wide neither page scrolls sideways', async () => {
    const url = await invite('A Client With A Rather Long Organisation Name Ltd');
    const page = await browser.newPage();
    await page.setViewportSize({ width: 320, height: 640 });
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    await page.goto(url);
    assert.is(await overflow(), 0, 'claim page');
    await page.getByRole('button', { name: 'Claim Your API Key' }).click();
    await page.getByLabel(/^API key for/).waitFor();
    assert.is(await overflow(), 0, 'key page');
    await page.close();
  });
  test.run();
}
