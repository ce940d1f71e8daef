import fs from 'node:fs';
import { createRequire } from 'node:module';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../../tools/chromium.ts';
import { startTestService, type TestService, tempDir } from './service.ts';

// Debian's Chromium, headless, in a fresh profile, for the Explore page's browser tests.

const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface ExploreBrowser {
  readonly browser: BrowserContext;
  readonly page: Page;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

/** Chromium with clipboard access to `origin`, one page open. */
export async function launchExplore(origin: string, viewport = { width: 1100, height: 900 }): Promise<ExploreBrowser> {
  const profile = await tempDir('dqs-chromium-');
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_ARGS],
    viewport,
    timeout: 60_000,
  });
  await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const page = await browser.newPage();
  return {
    browser,
    page,
    close: async () => {
      await browser.close();
      await fs.promises.rm(profile, { recursive: true, force: true });
    },
  };
}

/** axe-core's violations of impact serious or critical; evaluated through the DevTools protocol, which the page's CSP does not govern. */
export async function seriousViolations(page: Page) {
  await page.evaluate(AXE);
  const found = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length, help: v.help }));
  });
  return (found as { impact: string }[]).filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** A test server, and Chromium on its Explore page with the server's key typed in, at the catalog. */
export interface ExploreSession extends ExploreBrowser {
  readonly service: TestService;
}

/** Starts both; `close` ends both. */
export async function exploreSession(viewport?: { width: number; height: number }): Promise<ExploreSession> {
  const service = await startTestService();
  let chromium: ExploreBrowser | undefined;
  try {
    chromium = await launchExplore(service.url, viewport);
    const { page } = chromium;
    await page.goto(`${service.url}/explore`);
    await page.getByLabel('API key', { exact: true }).fill(service.key);
    await page.getByRole('button', { name: 'Use key' }).click();
    await page.getByRole('heading', { name: 'Catalog' }).waitFor();
  } catch (err) {
    await chromium?.close();
    await service.stop();
    throw err;
  }
  const opened = chromium;
  return {
    ...opened,
    service,
    close: async () => {
      await opened.close();
      await service.stop();
    },
  };
}
