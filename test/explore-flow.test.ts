import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CHROMIUM_MISSING } from '../tools/chromium.ts';
import { jsonGrid, sameRows, tableOnPage } from './helpers/explore.ts';
import { type ExploreSession, exploreSession, seriousViolations } from './helpers/explore-browser.ts';
import { type TestService, tempDir } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';

// Moving through the Explore page (issue 57), in headless Chromium against a real
// server: links between views keep the filters that apply, Back steps a view at a time,
// a table column reads in one number of decimals, a chart of one page draws whole years,
// a currency chip replaces the currency, and the claim page leads here. It takes the
// aggregate view's screenshot README shows (docs/img/explore-aggregate.png).

const UPDATE = process.env.UPDATE_SCREENSHOTS === '1';

if (CHROMIUM_MISSING) {
  skippedSuite('Explore flow in headless Chromium', CHROMIUM_MISSING);
} else {
  const test = suite('Explore flow in headless Chromium');
  let service: TestService;
  let session: ExploreSession | undefined;
  let page: Page;
  let images: string;
  test.before(async () => {
    images = UPDATE ? path.resolve(import.meta.dirname, '../docs/img') : await tempDir('dqs-screenshots-');
    session = await exploreSession({ width: 1400, height: 1000 });
    ({ service, page } = session);
  });
  test.after(async () => {
    await session?.close();
    if (images && !UPDATE) await fs.promises.rm(images, { recursive: true, force: true });
  });

  const here = () => {
    const url = new URL(page.url());
    return url.pathname + url.search;
  };
  /** Waits for the view the URL names to be shown: its table, or its refusal. */
  const shown = async () => {
    await page.locator('#view table.answer, #view [role=alert]').first().waitFor({ timeout: 30_000 });
  };
  const open = async (pathAndQuery: string) => {
    await page.goto(`${service.url}${pathAndQuery}`);
    await shown();
  };
  /** Types a filter's values and leaves the field, as a user does; waits for the view to show them. */
  const filter = async (dimension: string, values: string) => {
    await page.locator(`#param-${dimension}`).fill(values);
    await page.locator(`#param-${dimension}`).press('Tab');
    await page.waitForURL((url) => url.searchParams.getAll(dimension).join(',') === values);
    await page.waitForFunction(
      (v) => (document.querySelector(`#param-${v[0]}`) as HTMLInputElement | null)?.value === v[1],
      [dimension, values],
    );
    await shown();
  };
  const viewLink = (name: string) => page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name, exact: true });
  const hrefOf = async (name: string) => (await viewLink(name).getAttribute('href'))!;
  /** Each value of a column of the table on screen: the text shown and the raw value. */
  const column = (name: string) =>
    page.locator('table.answer').evaluate((table, wanted) => {
      const at = [...table.querySelectorAll('thead th')].findIndex((th) => th.textContent === wanted);
      return [...table.querySelectorAll('tbody tr')].map((tr) => {
        const cell = tr.children[at] as HTMLElement;
        return { text: cell.textContent ?? '', raw: cell.dataset.raw ?? '' };
      });
    }, name);

  test('a view link keeps the filters the target takes, drops the rest, and follows the view shown; Back steps a view at a time', async () => {
    await open('/explore/financials?metric=ggr');
    const start = here();
    assert.is(await hrefOf('Aggregate'), '/explore/aggregate?metric=ggr');
    // Reference takes no financial dataset: its link carries nothing.
    assert.is(await hrefOf('Reference'), '/explore/reference');
    await viewLink('Aggregate').click();
    await page.waitForURL(/\/explore\/aggregate\?metric=ggr&fx=USD$/);
    await shown();
    await filter('country', 'France,Spain');
    await filter('year', '2020,2021');
    const aggregate = here();
    // Financials takes the dataset, the currency picked, both filters; not the aggregate's group_by.
    const params = new URL(await hrefOf('Financials'), service.url).searchParams;
    assert.equal([...params].sort(), [
      ['country', 'France'],
      ['country', 'Spain'],
      ['fx', 'USD'],
      ['metric', 'ggr'],
      ['year', '2020'],
      ['year', '2021'],
    ]);
    await page.locator('#param-group_by').fill('country');
    await page.locator('#param-group_by').press('Tab');
    await page.waitForURL(/group_by=country/);
    await shown();
    assert.ok(!new URL(await hrefOf('Revisions'), service.url).searchParams.has('group_by'), 'revisions takes no group_by');
    const grouped = here();

    await viewLink('Financials').click();
    await page.waitForURL((url) => url.pathname === '/explore/financials');
    await shown();
    const query = new URL(page.url()).searchParams;
    assert.equal(query.getAll('country'), ['France', 'Spain']);
    assert.equal(query.getAll('year'), ['2020', '2021']);
    assert.is(query.has('group_by'), false);
    const rows = await tableOnPage(page);
    assert.ok(rows.rows.length > 0);
    assert.is(sameRows(rows, jsonGrid((await service.get(`/v1/financials?${query}`)).json.data)), undefined);
    for (const r of rows.rows) {
      assert.ok(['France', 'Spain'].includes(r[rows.columns.indexOf('country')]!), `${r}`);
      assert.ok(['2020', '2021'].includes(r[rows.columns.indexOf('year')]!), `${r}`);
    }
    // The links now follow the financials view.
    assert.is(new URL(await hrefOf('Aggregate'), service.url).searchParams.getAll('country').join(), 'France,Spain');

    // Back: the aggregate as last shown, its three field changes one entry; Back again: the view before them.
    await page.goBack();
    await page.waitForURL((url) => url.pathname + url.search === grouped);
    await shown();
    const back = await tableOnPage(page);
    assert.equal(
      [...new Set(back.rows.map((r) => r[back.columns.indexOf('country')]))].sort(),
      ['France', 'Spain'],
      'the aggregate shows its filters again',
    );
    assert.ok(aggregate !== grouped);
    await page.goBack();
    await page.waitForURL((url) => url.pathname + url.search === start);
    await shown();
    assert.is(await hrefOf('Aggregate'), '/explore/aggregate?metric=ggr', 'the links follow Back');
  });

  test('each number column of the table reads in one number of decimals: money in cents, fractions in more', async () => {
    await open('/explore/aggregate?metric=ggr&group_by=region,year&fx=USD&period=2015-01-01:2024-12-31&compare=previous_year');
    const decimals = (text: string) => text.split('.')[1]?.length ?? 0;
    for (const name of ['ggr_sum', 'ggr_sum_pct_change']) {
      const cells = (await column(name)).filter((c) => c.raw !== '');
      assert.ok(cells.length > 10, `${name}: ${cells.length} values`);
      const places = new Set(cells.map((c) => decimals(c.text)));
      assert.is(places.size, 1, `${name} reads in one number of decimals: ${[...places]}`);
      const [d] = places;
      for (const c of cells)
        assert.ok(Math.abs(Number(c.text.replace(/,/g, '')) - Number(c.raw)) <= 0.5 * 10 ** -d! + 1e-12, `${name}: ${c.text} for ${c.raw}`);
      const raws = cells.map((c) => Number(c.raw));
      const largest = Math.max(...raws.map(Math.abs));
      if (name === 'ggr_sum') assert.is(d, raws.every(Number.isInteger) ? 0 : 2, 'money in cents');
      // A fraction's largest value keeps four significant digits, so the smaller ones are not rounded to nothing.
      else assert.is(d, Math.max(2, 3 - Math.floor(Math.log10(largest))), `${name}: largest ${largest}`);
    }
  });

  test('a financials page charts only the years it holds whole, says so, and links to every year as an aggregate by year', async () => {
    const query = 'metric=ggr&region=Europe&channel=Online';
    const perYear = new Map<number, number>();
    for (let cursor = ''; ; ) {
      const answer = (await service.get(`/v1/financials?${query}&limit=1000${cursor && `&cursor=${encodeURIComponent(cursor)}`}`)).json;
      for (const r of answer.data) perYear.set(r.dimensions.year, (perYear.get(r.dimensions.year) ?? 0) + 1);
      if (!answer.pagination.has_more) break;
      cursor = answer.pagination.cursor;
    }
    const years = [...perYear.keys()].sort((a, b) => a - b);
    const [y0, y1, y2] = years as [number, number, number];
    assert.ok(years.length > 3 && perYear.get(y2)! > 1, `${years}`);
    // A page of the first two years and part of the third.
    const limit = perYear.get(y0)! + perYear.get(y1)! + Math.floor(perYear.get(y2)! / 2);
    await open(`/explore/financials?${query}&limit=${limit}`);
    const onPage = await tableOnPage(page);
    assert.ok(
      onPage.rows.some((r) => r[0] === String(y2)),
      'the page holds part of a third year',
    );
    const note = page.locator('.chart-box .page-years');
    assert.match(await note.innerText(), `this page's rows of ${y0}, ${y1}, the years it holds whole (${y2} goes on beyond this page)`);
    const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download SVG' }).click()]);
    const svg = fs.readFileSync((await file.path())!, 'utf8');
    const xLabels = [...svg.matchAll(/<text [^>]*text-anchor="middle">(\d{4})<\/text>/g)].map((m) => Number(m[1]));
    assert.equal(xLabels, [y0, y1], 'the x axis runs over the whole years only');

    // The next page begins inside the year the first one cut.
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.waitForURL(/cursor=/);
    await page.locator('.chart-box .page-years', { hasText: `${y2}` }).waitFor();

    await page.getByRole('link', { name: 'Every year of this view, as an aggregate by year' }).click();
    await page.waitForURL((url) => url.pathname === '/explore/aggregate');
    await shown();
    const link = new URL(page.url()).searchParams;
    assert.is(link.get('group_by'), 'year');
    assert.is(link.get('region'), 'Europe');
    assert.is(link.get('channel'), 'Online');
    assert.is(link.has('limit') || link.has('cursor'), false);
    const byYear = await tableOnPage(page);
    assert.equal(
      byYear.rows.map((r) => Number(r[0])),
      years,
      'one row per year of the view',
    );
    assert.equal(await seriousViolations(page), [], 'axe on a paged chart');
  });

  test('a currency chip replaces the currency of an aggregate not grouped by it, and adds one to an aggregate that is', async () => {
    await open('/explore/aggregate?metric=ggr&group_by=region');
    await page.waitForURL(/fx=USD/);
    await page.locator('button[data-facet="fx"][data-value="EUR"]').click();
    await page.waitForURL((url) => url.searchParams.getAll('fx').join() === 'EUR');
    await page.locator('button[data-facet="fx"][data-value="EUR"][aria-pressed="true"]').waitFor();
    await shown();
    assert.is(await page.locator('#view [role=alert]').count(), 0, 'the view answers');
    assert.is(
      sameRows(await tableOnPage(page), jsonGrid((await service.get('/v1/aggregate?metric=ggr&group_by=region&fx=EUR')).json.data)),
      undefined,
    );

    await open('/explore/aggregate?metric=ggr&group_by=region,fx&fx=USD');
    await page.locator('button[data-facet="fx"][data-value="EUR"]').click();
    await page.waitForURL((url) => url.searchParams.getAll('fx').join() === 'USD,EUR');
    await shown();
    const both = await tableOnPage(page);
    assert.equal([...new Set(both.rows.map((r) => r[both.columns.indexOf('fx')]))].sort(), ['EUR', 'USD']);
  });

  test('the aggregate view, screenshot: controls, filters with their counts, the rule of its rows, the table', async () => {
    await open('/explore/aggregate?metric=ggr&fx=USD&group_by=country&region=North+America&channel=Land');
    await page.locator('fieldset.filters button[data-facet]').first().waitFor({ timeout: 30_000 });
    await page.locator('p.rule:not([hidden])').waitFor();
    await page.locator('figure.chart canvas').waitFor();
    assert.equal(await seriousViolations(page), [], 'axe on the aggregate view');
    // From the top to the table's last row: the copy and download panels below are another screenshot's.
    const table = (await page.locator('table.answer').boundingBox())!;
    await page.screenshot({
      path: path.join(images, 'explore-aggregate.png'),
      fullPage: true,
      clip: { x: 0, y: 0, width: 1400, height: Math.ceil(table.y + table.height + 16) },
    });
    assert.ok(fs.statSync(path.join(images, 'explore-aggregate.png')).size > 10_000);
  });

  test('the claim pages link to Explore and to the API reference, and the links lead there', async () => {
    const invite = (await service.admin('POST', '/invites', { client: 'Flow Analytics' })).json.url as string;
    const claim = await session!.browser.newPage();
    try {
      await claim.goto(invite);
      const links = async () =>
        claim.getByRole('link').evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute('href')] as [string, string]));
      assert.equal(await links(), [
        ['Explore the data in your browser', '/explore'],
        ['API reference', '/docs'],
      ]);
      await claim.getByRole('link', { name: 'API reference' }).click();
      await claim.waitForURL((url) => url.pathname.startsWith('/docs'));
      await claim.getByRole('heading').first().waitFor();
      await claim.goBack();
      await claim.getByRole('button', { name: 'Claim Your API Key' }).click();
      const key = await claim.getByLabel('API key for Flow Analytics').inputValue();
      assert.ok(
        (await links()).some(([text, href]) => text === 'Explore' && href === '/explore'),
        'the key page says where to use the key',
      );
      await claim.getByRole('link', { name: 'Explore', exact: true }).click();
      await claim.waitForURL((url) => url.pathname === '/explore');
      await claim.getByLabel('API key', { exact: true }).fill(key);
      await claim.getByRole('button', { name: 'Use key' }).click();
      await claim.getByRole('heading', { name: 'Catalog' }).waitFor();
    } finally {
      await claim.close();
    }
  });

  test.run();
}
