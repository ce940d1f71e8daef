import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CHROMIUM_MISSING } from '../tools/chromium.ts';
import { type ExploreSession, exploreSession, seriousViolations } from './helpers/explore-browser.ts';
import type { TestService } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';

// The Explore page's form and keyboard (issue 57), in headless Chromium against a real
// server: the first controls, the rest under "More options", help in words on demand,
// focus kept on the control used across the re-render, skip links, and the chart's
// text alternative.

if (CHROMIUM_MISSING) {
  skippedSuite('Explore form and keyboard in headless Chromium', CHROMIUM_MISSING);
} else {
  const test = suite('Explore form and keyboard in headless Chromium');
  let service: TestService;
  let session: ExploreSession | undefined;
  let page: Page;
  test.before(async () => {
    session = await exploreSession();
    ({ service, page } = session);
  });
  test.after(async () => {
    await session?.close();
  });

  const open = async (pathAndQuery: string) => {
    await page.goto(`${service.url}${pathAndQuery}`);
    await page.locator('table.answer').waitFor({ timeout: 30_000 });
  };
  const PLAIN = '/explore/aggregate?metric=ggr&group_by=region&fx=USD';

  test('the first controls come first; the rest sit under "More options", closed on a plain view and open when one of them is set', async () => {
    await open(PLAIN);
    const more = page.locator('details.more');
    assert.is(await more.getAttribute('open'), null, 'closed on a plain view');
    // The first controls are those /openapi.json marks `x-explore: first`, and none of the rest is outside the disclosure.
    const doc = await (await fetch(`${service.url}/openapi.json`)).json();
    const parameters: { name: string; in: string; 'x-explore'?: string; 'x-metrics'?: string[] }[] =
      doc.paths['/v1/aggregate'].get.parameters;
    const options = parameters.filter((p) => p.in === 'query' && !p['x-metrics'] && p['x-explore'] !== 'page' && p.name !== 'metric');
    const first = options.filter((p) => p['x-explore'] === 'first').map((p) => p.name);
    assert.ok(first.includes('group_by') && first.includes('measure') && first.includes('period'), first.join());
    for (const name of ['compare', 'share', 'per', 'having', 'index', 'cagr', 'latest', 'shape', 'rollup', 'order', 'limit', 'release'])
      assert.ok(
        options.some((p) => p.name === name && p['x-explore'] === undefined),
        `${name} is under More options`,
      );
    for (const p of options) {
      const inside = await page.locator(`details.more #param-${p.name}`).count();
      assert.is(inside, first.includes(p.name) ? 0 : 1, `#param-${p.name}`);
    }
    assert.is(await page.locator('#param-compare').isVisible(), false);
    // In reading order: the dataset, the first controls, the filters, then More options.
    const order = await page.evaluate(() =>
      [
        ...document.querySelectorAll(
          'form.controls #param-metric, form.controls #param-group_by, form.controls fieldset.filters, details.more',
        ),
      ].map((el) => el.id || el.className),
    );
    assert.equal(order, ['param-metric', 'param-group_by', 'filters', 'more']);

    await open(`${PLAIN}&compare=previous_year&group_by=year`);
    assert.is(await more.getAttribute('open'), '', 'open when compare is set');
    assert.match(await more.locator('summary').innerText(), /compare/);
    assert.is(await page.locator('#param-compare').inputValue(), 'previous_year');
    assert.ok(await page.locator('#param-compare').isVisible());
  });

  test('help is hidden until asked, in plain words (no markdown marks) and muted; an error still shows beside its field', async () => {
    await open(PLAIN);
    const help = page.locator('#help-measure');
    assert.is(await help.isVisible(), false, 'hidden until asked');
    const toggle = page.locator('#help-toggle-measure');
    assert.is(await toggle.getAttribute('aria-expanded'), 'false');
    assert.is(await toggle.getAttribute('aria-controls'), 'help-measure');
    await toggle.focus();
    await page.keyboard.press('Enter');
    await help.waitFor({ state: 'visible' });
    assert.is(await toggle.getAttribute('aria-expanded'), 'true');
    const text = await help.innerText();
    assert.match(text, /<metric>:<fn>/);
    assert.not.match(text, /[`*]|\]\(/, 'no markdown marks');
    for (const shown of await page.locator('.help').allTextContents()) assert.not.match(shown, /`|\*\*/);
    // Muted: not the colour of body text, nor of an error.
    const colour = (selector: string) =>
      page
        .locator(selector)
        .first()
        .evaluate((el) => getComputedStyle(el).color);
    assert.is.not(await colour('#help-measure'), await colour('body'));
    // No help is printed under a control until asked: every note is empty, so not shown.
    assert.is(await page.locator('.control .note:visible').count(), 0);

    // A 400 on a field under the closed disclosure: its error is beside it, visible, with no help opened.
    await page.goto(`${service.url}${PLAIN}&having=nonsense`);
    const note = page.locator('#note-having.bad');
    await note.waitFor({ timeout: 30_000 });
    assert.ok(await note.isVisible(), 'the error shows');
    assert.is(await page.locator('#help-having').isVisible(), false, 'the help stays closed');
    assert.is(await page.locator('#param-having').getAttribute('aria-invalid'), 'true');
    assert.is(await page.locator('#param-having').getAttribute('aria-describedby'), 'note-having');
    assert.is.not(await colour('#note-having'), await colour('#help-having'), 'errors and help look different');
  });

  test('Enter on a facet chip keeps focus on that chip (same facet and value) after the re-render; a select keeps it too', async () => {
    await open(PLAIN);
    const chip = 'button[data-facet="region"][data-value="Europe"]';
    await page.locator(chip).waitFor({ timeout: 30_000 });
    const before = await page.locator(chip).elementHandle();
    await page.locator(chip).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/region=Europe/);
    await page.locator(`${chip}[aria-pressed="true"]`).waitFor({ timeout: 30_000 });
    await page.waitForFunction((selector) => document.activeElement === document.querySelector(selector), chip, { timeout: 30_000 });
    assert.ok(await page.evaluate((old) => old !== document.activeElement && !old!.isConnected, before), 'a chip of the new view');
    // Again, off: the chip pressed before is the one focused.
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => !url.searchParams.has('region'));
    await page.locator(`${chip}[aria-pressed="false"]`).waitFor({ timeout: 30_000 });
    await page.waitForFunction((selector) => document.activeElement === document.querySelector(selector), chip, { timeout: 30_000 });
    // A select: the same id.
    await page.locator('details.more summary').click();
    await page.locator('#param-rollup').focus();
    await page.locator('#param-rollup').selectOption('true');
    await page.waitForURL(/rollup=true/);
    await page.locator('table.answer').waitFor();
    await page.waitForFunction(() => document.activeElement?.id === 'param-rollup', undefined, { timeout: 30_000 });
  });

  test('skip links: from the top of the page, two Tabs and Enter reach the chart; the other reaches the table', async () => {
    await open('/explore/aggregate?metric=ggr&group_by=region,year&fx=USD');
    await page.locator('figure.chart canvas').waitFor({ timeout: 30_000 });
    // Nothing focused: the first Tab starts at the top of the document.
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    let tabs = 0;
    for (; tabs < 10; ) {
      await page.keyboard.press('Tab');
      tabs++;
      if ((await page.evaluate(() => document.activeElement?.textContent)) === 'Skip to the chart') break;
    }
    assert.is(tabs, 2, 'the skip link to the chart is the second stop');
    assert.ok(await page.getByRole('link', { name: 'Skip to the chart' }).isVisible(), 'seen when focused');
    await page.keyboard.press('Enter');
    assert.is(await page.evaluate(() => document.activeElement?.id), 'chart');
    assert.is(await page.evaluate(() => location.hash), '', 'the URL stays the view');
    // The next Tab is inside the chart region.
    await page.keyboard.press('Tab');
    assert.is(await page.evaluate(() => document.activeElement?.id), 'measure');
    await page.getByRole('link', { name: 'Skip to the table' }).focus();
    await page.keyboard.press('Enter');
    assert.is(await page.evaluate(() => document.activeElement?.id), 'answer');
    assert.is(await page.evaluate(() => document.activeElement?.tagName), 'TABLE');
    // Hidden where the view has no table: the catalog.
    await page.goto(`${service.url}/explore`);
    await page.getByRole('heading', { name: 'Catalog' }).waitFor();
    assert.is(await page.locator('nav.skip a:not([hidden])').count(), 0);
  });

  test('the chart is a figure whose caption says what it shows and links its table; the plot is an img labelled so', async () => {
    await open('/explore/aggregate?metric=ggr&group_by=region,year&fx=USD&period=2018-01-01:2024-12-31');
    await page.locator('figure.chart canvas').waitFor({ timeout: 30_000 });
    const lines = await page.locator('.legend li:not(.forecast)').count();
    const summary = await page.locator('figure.chart figcaption .chart-summary').innerText();
    assert.match(summary, new RegExp(`^ggr_sum by year \\(USD\\): ${lines} lines \\(.+\\), 2018 to 2024\\.$`));
    const img = page.locator('figure.chart [role=img]');
    assert.is(await img.getAttribute('aria-label'), summary);
    assert.is(await img.getAttribute('aria-details'), 'answer');
    const link = page.locator('figure.chart figcaption a');
    assert.is(await link.getAttribute('href'), '#answer');
    await link.click();
    assert.is(await page.evaluate(() => document.activeElement?.id), 'answer');
    assert.is(await page.evaluate(() => document.activeElement?.tagName), 'TABLE');
    // Bars: how many, and the highest.
    await open('/explore/aggregate?metric=ggr&group_by=region&fx=USD&year=2024');
    await page.locator('figure.chart canvas').waitFor({ timeout: 30_000 });
    const rows = await page.locator('table.answer tbody tr').count();
    assert.match(await page.locator('.chart-summary').innerText(), new RegExp(`: ${rows} bars, one per group; the highest is .+, .+\\.$`));
  });

  test('axe-core finds nothing serious on the aggregate view with "More options" open and a help shown', async () => {
    await open(`${PLAIN}&compare=previous_year&group_by=year`);
    await page.locator('figure.chart canvas').waitFor({ timeout: 30_000 });
    await page.locator('button[data-facet="region"]').first().waitFor({ timeout: 30_000 });
    await page.locator('#help-toggle-compare').click();
    await page.locator('#help-compare').waitFor({ state: 'visible' });
    assert.equal(await seriousViolations(page), []);
  });

  test.run();
}
