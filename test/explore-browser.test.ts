import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CHROMIUM_MISSING } from '../tools/chromium.ts';
import { jsonGrid, PYTHON, RSCRIPT, runSnippet, sameRows, snippetClientsDir, tableOnPage } from './helpers/explore.ts';
import { type ExploreBrowser, launchExplore, seriousViolations as violationsOf } from './helpers/explore-browser.ts';
import { startTestService, type TestService, tempDir } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';

// The Explore page (issue 43) in Debian's Chromium, headless, against a real server:
// the key, views opened by URL, the table against the /v1 answer, the chart, facets,
// the "Copy as" snippets run for real, reload, errors, and axe-core's audit. It also
// takes the screenshots README shows (docs/img/).

const UPDATE = process.env.UPDATE_SCREENSHOTS === '1';

/** A derived aggregate: each region's USD GGR by year against the year before. */
const AGGREGATE = 'metric=ggr&group_by=region,year&fx=USD&period=2018-01-01:2024-12-31&compare=previous_year';

if (CHROMIUM_MISSING) {
  skippedSuite('Explore page in headless Chromium', CHROMIUM_MISSING);
} else {
  const test = suite('Explore page in headless Chromium');
  let service: TestService;
  let chromium: ExploreBrowser;
  let browser: BrowserContext;
  let images: string;
  let page: Page;
  const requested: string[] = [];
  /** The origins of the servers this suite started: the only hosts the page may ask. */
  const ours = new Set<string>();
  const cspErrors: string[] = [];
  test.before(async () => {
    images = UPDATE ? path.resolve(import.meta.dirname, '../docs/img') : await tempDir('dqs-screenshots-');
    // The pandas and R snippets install their client from this server, as they show.
    service = await startTestService({ env: { CLIENTS_DIR: await snippetClientsDir() } });
    ours.add(new URL(service.url).origin);
    chromium = await launchExplore(service.url);
    ({ browser, page } = chromium);
    browser.on('request', (request) => requested.push(request.url()));
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspErrors.push(message.text());
    });
  });
  test.after(async () => {
    await chromium?.close();
    await service?.stop();
    if (images && !UPDATE) await fs.promises.rm(images, { recursive: true, force: true });
  });

  const seriousViolations = () => violationsOf(page);
  const open = async (pathAndQuery: string) => {
    await page.goto(`${service.url}${pathAndQuery}`);
    await page.locator('#view table, #view [role=alert], #view .controls').first().waitFor({ timeout: 30_000 });
  };
  const answerTable = () => page.locator('table.answer').waitFor({ timeout: 30_000 });

  test('without a key the page asks for one; typed, it is kept in sessionStorage and the catalog shows', async () => {
    await page.goto(`${service.url}/explore`);
    await page.getByText('Type your API key above').waitFor();
    await page.getByLabel('API key', { exact: true }).fill(service.key);
    await page.getByRole('button', { name: 'Use key' }).click();
    await page.getByRole('heading', { name: 'Catalog' }).waitFor();
    const catalog = (await service.get('/v1/catalog')).json;
    for (const d of catalog.datasets) {
      const section = page.locator('section.dataset', { has: page.getByRole('heading', { name: d.name, exact: true }) });
      assert.match(await section.innerText(), d.description);
      assert.match(await section.innerText(), d.dimensions.join(', '));
    }
    const releases = (await service.get('/v1/releases')).json.releases;
    assert.ok(releases.length > 0);
    for (const r of releases) await page.getByRole('rowheader', { name: r.id }).waitFor();
    assert.is(await page.evaluate(() => sessionStorage.getItem('dqs-explore-key')), service.key);
    assert.is(await page.getByLabel('API key', { exact: true }).inputValue(), '', 'the key leaves the input once saved');
    assert.equal(await seriousViolations(), [], 'axe on the catalog');
    await page.screenshot({ path: path.join(images, 'explore-catalog.png'), fullPage: true });
  });

  test('a derived aggregate opened by URL: the table is the /v1 answer, and a line chart is drawn', async () => {
    await open(`/explore/aggregate?${AGGREGATE}`);
    await answerTable();
    const want = jsonGrid((await service.get(`/v1/aggregate?${AGGREGATE}`)).json.data);
    assert.ok(want.rows.length > 10);
    assert.is(sameRows(await tableOnPage(page), want), undefined);
    assert.match(await page.locator('table.answer caption').innerText(), /groups of ggr/);
    // The first derived key is charted, as a line over years: the canvas holds drawn pixels.
    assert.is(await page.getByLabel('Measure charted').inputValue(), 'ggr_sum_pct_change');
    assert.match(await page.locator('figure.chart figcaption').innerText(), /ggr_sum_pct_change by year/);
    const inked = await page.locator('figure.chart canvas').evaluate((canvas: HTMLCanvasElement) => {
      const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
      let n = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) n++;
      return n;
    });
    assert.ok(inked > 1000, `the chart has ${inked} drawn pixels`);
    assert.is(await page.locator('.legend li').count(), new Set(want.rows.map((r) => r[0])).size, 'one line per region');
    // Another measure redraws; an SVG download is a vector file.
    await page.getByLabel('Measure charted').selectOption('ggr_sum');
    await page.locator('figure.chart figcaption', { hasText: 'ggr_sum by year' }).waitFor();
    const [svg] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download SVG' }).click()]);
    const svgText = fs.readFileSync((await svg.path())!, 'utf8');
    assert.match(svgText, /^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    assert.ok((svgText.match(/<polyline /g) ?? []).length >= 2);
    const [png] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download PNG' }).click()]);
    assert.equal([...fs.readFileSync((await png.path())!).subarray(1, 4)], [...Buffer.from('PNG')]);
    assert.equal(await seriousViolations(), [], 'axe on a table and chart view');
    await page.locator('section.chart-box').screenshot({ path: path.join(images, 'explore-chart.png') });
  });

  test('every "Aggregate …" link of the catalog opens on a 200: in mixed currencies, the catalog first currency is picked and said', async () => {
    await open('/explore');
    await page.getByRole('heading', { name: 'Catalog' }).waitFor();
    const links = await page.getByRole('link', { name: /^Aggregate / }).evaluateAll((as) => as.map((a) => a.getAttribute('href')!));
    const catalog = (await service.get('/v1/catalog')).json;
    assert.is(links.length, catalog.datasets.filter((d: any) => d.metrics.length > 0).length);
    for (const href of links) {
      const api = href.replace('/explore/', '/v1/');
      assert.is((await service.get(api)).status, 200, api);
    }
    // ggr, in every currency, links in the catalog's first (USD); the view opened on its own picks it too, and says so.
    const first = Object.keys(catalog.dimensions.fx.values)[0];
    assert.ok(links.includes(`/explore/aggregate?metric=ggr&fx=${first}`), links.join(' '));
    await open('/explore/aggregate?metric=ggr');
    await answerTable();
    assert.is(await page.locator('#view [role=alert]').count(), 0);
    assert.match(await page.locator('p.picked').innerText(), new RegExp(`fx=${first} picked for you`));
    assert.match(page.url(), new RegExp(`fx=${first}`));
    // And it can be changed: the fx filter holds it.
    assert.is(await page.locator('#param-fx').inputValue(), first);
    await page.locator('#param-fx').fill('EUR');
    await page.locator('#param-fx').dispatchEvent('change');
    await page.waitForURL(/fx=EUR/);
    await answerTable();
    assert.is(await page.locator('p.picked').count(), 0);
  });

  test('an aggregate view: each country chip counts the rows the table adds up, and the national-totals rule is said beside it', async () => {
    const view = 'metric=ggr&fx=USD&group_by=country&region=North+America&channel=Land';
    await open(`/explore/aggregate?${view}`);
    await answerTable();
    await page.locator('button[data-facet="country"]').first().waitFor({ timeout: 30_000 });
    const table = await tableOnPage(page);
    const [country, rows] = [table.columns.indexOf('country'), table.columns.indexOf('rows')];
    const tableRows = new Map(table.rows.map((r) => [r[country]!, Number(r[rows])]));
    const chips = await page
      .locator('button[data-facet="country"]')
      .evaluateAll((buttons) =>
        buttons.map((b) => [b.getAttribute('data-value'), b.querySelector('.count')!.textContent!.replace(/\D/g, '')]),
      );
    assert.ok(chips.length > 1);
    for (const [value, count] of chips) assert.is(Number(count), tableRows.get(value!), `${value}: the chip's count is the table's rows`);
    const rule = page.locator('p.rule');
    assert.ok(await rule.isVisible(), 'the rule is shown');
    assert.match(await rule.innerText(), /national totals only \(state ""\): add state to group_by/);
    // Grouped by state too, every row is read: no rule to say.
    await open(`/explore/aggregate?${view.replace('group_by=country', 'group_by=country,state')}`);
    await answerTable();
    await page.locator('button[data-facet="country"]').first().waitFor({ timeout: 30_000 });
    assert.is(await page.locator('p.rule').isVisible(), false);
  });

  test('a bar chart without year; a facet value clicked adds its filter to the URL and narrows the rows', async () => {
    await open('/explore/aggregate?metric=ggr&group_by=region&fx=USD&year=2024');
    await answerTable();
    assert.match(await page.locator('figure.chart figcaption').innerText(), /ggr_sum by group/);
    const before = (await tableOnPage(page)).rows.length;
    const europe = page.locator('button[data-facet="region"][data-value="Europe"]');
    assert.is(await europe.getAttribute('aria-pressed'), 'false');
    await europe.click();
    await page.waitForURL(/region=Europe/);
    await page.locator('button[data-facet="region"][data-value="Europe"][aria-pressed="true"]').waitFor();
    await answerTable();
    const after = await tableOnPage(page);
    assert.is(new URL(page.url()).searchParams.getAll('region').join(), 'Europe');
    assert.ok(before > 1 && after.rows.length === 1 && after.rows[0]![0] === 'Europe', `${before} groups, then ${after.rows.length}`);
    // Clicking it again takes the filter out.
    await page.locator('button[data-facet="region"][data-value="Europe"]').click();
    await page.waitForURL((url) => !url.searchParams.has('region'));
    await answerTable();
    assert.is((await tableOnPage(page)).rows.length, before);
  });

  test('a year, which /v1/facets sends as a number, clicked twice: pressed with one year= in the URL, then neither', async () => {
    await open('/explore/aggregate?metric=ggr&group_by=region&fx=USD');
    await answerTable();
    const year = '[data-facet="year"][data-value="2024"]';
    assert.is(await page.locator(`button${year}`).getAttribute('aria-pressed'), 'false');
    await page.locator(`button${year}`).click();
    await page.waitForURL(/year=2024/);
    await page.locator(`button${year}[aria-pressed="true"]`).waitFor();
    assert.equal(new URL(page.url()).searchParams.getAll('year'), ['2024']);
    await page.locator(`button${year}`).click();
    await page.waitForURL((url) => !url.searchParams.has('year'));
    await page.locator(`button${year}[aria-pressed="false"]`).waitFor();
  });

  test('time series: index, cagr, latest and shape have controls; wide shows the /v1 answer; the snippets run as shown', async () => {
    const query = 'metric=ggr&group_by=region,year&fx=USD&period=2019-01-01:2024-12-31&index=2019&shape=wide';
    await open(`/explore/aggregate?${query}`);
    await answerTable();
    const want = (await service.get(`/v1/aggregate?${query}`)).json;
    const shown = await tableOnPage(page);
    assert.is(sameRows(shown, jsonGrid(want.data)), undefined);
    assert.ok(shown.columns.includes('ggr_sum_index_2024') && !shown.columns.includes('year'));
    assert.is(await page.locator('#param-shape').inputValue(), 'wide');
    assert.is(await page.locator('#param-index').inputValue(), '2019');
    assert.is(await page.getByLabel('Measure charted').inputValue(), 'ggr_sum_2024', "wide: the first key's latest year");
    for (const kind of ['curl', 'TypeScript', 'CLI']) {
      await page.locator(`button[data-snippet="${kind}"]`).click();
      await page.locator(`#snippet[data-kind="${kind}"]`).waitFor();
      const code = await page.locator('#snippet').innerText();
      if (kind === 'TypeScript') assert.match(code, /"index":2019/);
      assert.is(sameRows(await runSnippet(kind, code, service.key), shown), undefined, kind);
    }
    // The long shape again, then the latest two years: each control rewrites the URL, and the table follows.
    await page.locator('#param-shape').selectOption('');
    await page.waitForURL((url) => !url.searchParams.has('shape'));
    await answerTable();
    assert.ok((await tableOnPage(page)).columns.includes('year'));
    await page.locator('#param-latest').fill('2');
    await page.locator('#param-latest').press('Enter');
    await page.waitForURL(/latest=2/);
    await page.locator('table.answer tbody tr').first().waitFor();
    const long = (await service.get(`/v1/aggregate?${query.replace('&shape=wide', '')}&latest=2`)).json.data;
    await page.waitForFunction((n) => document.querySelectorAll('table.answer tbody tr').length === n, long.length);
    assert.is(sameRows(await tableOnPage(page), jsonGrid(long)), undefined);
    // A conflict shows the API's own words beside the form.
    await open('/explore/aggregate?metric=ggr&group_by=region&fx=USD&cagr=2015:2024&index=2019');
    await page.getByText('Cannot combine cagr with index').first().waitFor();
  });

  test('copy as curl, pandas, R, TypeScript and the CLI: each, run as shown, returns the rows on the page', async () => {
    const missing: Record<string, string | undefined> = {
      pandas: fs.existsSync(PYTHON) ? undefined : `no ${PYTHON} (apt-get install python3-pandas)`,
      R: RSCRIPT ? undefined : 'no Rscript (apt-get install r-base-core)',
    };
    // An aggregate with derived keys, and rows holding state "" (text that pandas and R would read as missing).
    for (const view of [`/explore/aggregate?${AGGREGATE}`, '/explore/financials?metric=ggr&country=France&limit=20']) {
      await open(view);
      await answerTable();
      const shown = await tableOnPage(page);
      assert.ok(shown.rows.length > 5, view);
      for (const kind of ['curl', 'pandas', 'R', 'TypeScript', 'CLI']) {
        await page.locator(`button[data-snippet="${kind}"]`).click();
        await page.locator(`#snippet[data-kind="${kind}"]`).waitFor();
        const code = await page.evaluate(() => navigator.clipboard.readText());
        assert.is(code, await page.locator('#snippet').innerText(), `${kind}: the copy is the snippet shown`);
        assert.not.ok(code.includes(service.key), `${kind}: no key in the snippet`);
        if (missing[kind]) {
          console.log(`${kind} snippet: skipped: ${missing[kind]}`);
          continue;
        }
        assert.is(sameRows(await runSnippet(kind, code, service.key), shown), undefined, `${kind} on ${view}`);
      }
    }
    await open(`/explore/aggregate?${AGGREGATE}`);
    await page.locator('button[data-snippet="pandas"]').click();
    await page.locator('#snippet[data-kind="pandas"]').waitFor();
    await page.locator('section.copy-as').screenshot({ path: path.join(images, 'explore-copy-as.png') });
  });

  test('copying cells gives their raw values; at most 10 lines, the rest summed into "other"; CSV and Parquet downloads', async () => {
    const query = 'metric=ggr&group_by=country,year&fx=USD&period=2022-01-01:2024-12-31';
    await open(`/explore/aggregate?${query}`);
    await answerTable();
    const want = (await service.get(`/v1/aggregate?${query}`)).json.data;
    const countries = new Set(want.map((r: any) => r.dimensions.country));
    assert.ok(countries.size > 11, `${countries.size} countries`);
    const legend = await page.locator('.legend li').allInnerTexts();
    assert.is(legend.length, 11);
    assert.is(legend[10]!.trim(), `other (${countries.size - 10})`);
    // The first row selected and copied: the raw sum, not the rounded text shown.
    await page.evaluate(() => getSelection()!.selectAllChildren(document.querySelector('table.answer tbody tr')!));
    await page.keyboard.press('Control+C');
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    const first = want[0];
    assert.is(copied, [first.dimensions.country, first.dimensions.year, first.values.ggr_sum, first.values.rows].join('\t'));
    assert.is.not(await page.locator('table.answer tbody tr td.num').first().innerText(), String(first.values.ggr_sum));
    const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: /^CSV — whole view/ }).click()]);
    assert.is(fs.readFileSync((await csv.path())!, 'utf8'), (await service.get(`/v1/aggregate?${query}&format=csv`)).text);

    await open('/explore/financials?metric=ggr&country=France&year=2024');
    await answerTable();
    const [parquet] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: /^Parquet/ }).click()]);
    assert.is(parquet.suggestedFilename(), 'ggr.parquet');
    const bytes = fs.readFileSync((await parquet.path())!);
    assert.is(bytes.subarray(0, 4).toString(), 'PAR1');
    // A Parquet file begins and ends with its magic; the request carried the key as a header, not in the URL.
    assert.is(bytes.subarray(-4).toString(), 'PAR1');
    assert.ok(requested.some((u) => u.endsWith('/v1/export?metric=ggr&country=France&year=2024')));
  });

  test('reload, and a new tab with the key typed there, show the same view', async () => {
    await open(`/explore/aggregate?${AGGREGATE}`);
    await answerTable();
    const first = await tableOnPage(page);
    await page.reload();
    await answerTable();
    assert.equal(await tableOnPage(page), first);
    const other = await browser.newPage();
    try {
      await other.goto(`${service.url}/explore/aggregate?${AGGREGATE}`);
      // sessionStorage is per tab: the new tab asks for the key.
      await other.getByText('Type your API key above').waitFor();
      await other.getByLabel('API key', { exact: true }).fill(service.key);
      await other.getByRole('button', { name: 'Use key' }).click();
      await other.locator('table.answer').waitFor({ timeout: 30_000 });
      assert.equal((await tableOnPage(other)).rows, first.rows);
    } finally {
      await other.close();
    }
  });

  test('row pages: Next page puts the cursor in the URL and shows the next rows; Back shows the first again', async () => {
    await open('/explore/financials?metric=ggr&country=France&limit=5');
    await answerTable();
    const first = await tableOnPage(page);
    const want = (await service.get('/v1/financials?metric=ggr&country=France&limit=5')).json;
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.waitForURL(/cursor=/);
    await page.locator('table.answer').waitFor();
    assert.is(new URL(page.url()).searchParams.get('cursor'), want.pagination.cursor);
    const next = (
      await service.get(`/v1/financials?metric=ggr&country=France&limit=5&cursor=${encodeURIComponent(want.pagination.cursor)}`)
    ).json;
    await page.waitForFunction(
      (year) => document.querySelector('table.answer tbody tr th')?.textContent === year,
      String(next.data[0].dimensions.year),
    );
    assert.is(sameRows(await tableOnPage(page), jsonGrid(next.data)), undefined);
    await page.goBack();
    await page.waitForURL((url) => !url.searchParams.has('cursor'));
    await page.waitForFunction(() => document.querySelector('table.answer'));
    assert.equal((await tableOnPage(page)).rows, first.rows);
  });

  test('a reference view: its table is the /v1/reference answer, and the TypeScript snippet returns those rows', async () => {
    await open('/explore/reference?dataset=country_reference&limit=7');
    await answerTable();
    const shown = await tableOnPage(page);
    assert.is(sameRows(shown, jsonGrid((await service.get('/v1/reference?dataset=country_reference&limit=7')).json.data)), undefined);
    assert.is(shown.rows.length, 7);
    await page.locator('button[data-snippet="TypeScript"]').click();
    const code = await page.locator('#snippet[data-kind="TypeScript"]').innerText();
    assert.is(sameRows(await runSnippet('TypeScript', code, service.key), shown), undefined);
    await page.locator('button[data-snippet="CLI"]').click();
    assert.match(await page.locator('#snippet[data-kind="CLI"]').innerText(), /no reference command/);
  });

  test('year=2019-2024: its error in words beside the year control, marked invalid; the facets keep their last counts; Copied is said beside Copy as', async () => {
    await open('/explore/aggregate?metric=ggr&fx=USD&group_by=country');
    await answerTable();
    await page.locator('button[data-facet="country"]').first().waitFor({ timeout: 30_000 });
    const before = await page.locator('button[data-facet="country"]').count();
    await page.locator('button[data-snippet="curl"]').click();
    // Said once the clipboard has taken it, which is asynchronous.
    await page.locator('.copy-as [role=status]', { hasText: 'Copied the curl snippet' }).waitFor({ timeout: 10_000 });
    const year = page.locator('#param-year');
    await year.fill('2019-2024');
    await year.dispatchEvent('change');
    await page.waitForURL(/year=2019-2024/);
    await page.locator('#param-year[aria-invalid="true"]').waitFor({ timeout: 30_000 });
    const describedBy = (await page.locator('#param-year').getAttribute('aria-describedby'))!;
    const note = page.locator(`#${describedBy}`);
    assert.match(await note.innerText(), /year/i);
    assert.not.match(await note.innerText(), /[{}"]/, 'words, not JSON');
    // Beside the field: the note follows the input in the same control.
    assert.ok(
      await page
        .locator('.control', { has: page.locator('#param-year') })
        .locator(`#${describedBy}`)
        .isVisible(),
    );
    await page.locator('#view [role=alert].error').first().waitFor();
    for (const text of await page.locator('#view [role=alert]').allInnerTexts()) assert.not.match(text, /formErrors|fieldErrors|\{"/);
    assert.is(await page.locator('button[data-facet="country"]').count(), before, 'the facets stay');
    // Notes and errors look different.
    const colour = (selector: string) =>
      page
        .locator(selector)
        .first()
        .evaluate((el) => getComputedStyle(el).color);
    assert.is.not(await colour('.note:not(.bad)'), await colour('.note.bad'));
    assert.equal(await seriousViolations(), [], 'axe on the refused view');
  });

  test('a 400 shows its error beside the control that caused it; a 401 goes back to the key input', async () => {
    await open('/explore/financials?metric=ggr&limit=5000');
    const note = page.locator('#note-limit.bad');
    await note.waitFor();
    assert.match(await note.innerText(), /Expected an integer from 1 to 1000/);
    assert.match(await page.getByRole('alert').innerText(), /400: Invalid query parameters/);
    assert.is(await page.locator('#param-limit').getAttribute('aria-invalid'), 'true');
    await page.evaluate(() => sessionStorage.setItem('dqs-explore-key', 'sk_live_wrongwrongwrongwrongwrongwrongwrongwron'));
    await page.goto(`${service.url}/explore/financials?metric=ggr&limit=5`);
    await page
      .getByRole('alert')
      .filter({ hasText: /API key/i })
      .waitFor();
    assert.is(await page.evaluate(() => document.activeElement?.id), 'api-key');
    assert.is(await page.getByLabel('API key', { exact: true }).getAttribute('aria-invalid'), 'true');
    // Forget key clears it from the tab.
    await page.getByRole('button', { name: 'Forget key' }).click();
    assert.is(await page.evaluate(() => sessionStorage.getItem('dqs-explore-key')), null);
  });

  test('a 429 shows the time Retry-After gives, counting down', async () => {
    // One request a minute: the catalog passes; the aggregate and the facets, asked for at once, are refused.
    const limited = await startTestService({ env: { RATE_LIMIT_PER_MINUTE: '1' } });
    ours.add(new URL(limited.url).origin);
    const tab = await browser.newPage();
    try {
      await tab.goto(`${limited.url}/explore`);
      await tab.evaluate((key) => sessionStorage.setItem('dqs-explore-key', key), limited.key);
      await tab.goto(`${limited.url}/explore/aggregate?metric=ggr&group_by=year&fx=USD`);
      const alert = tab.getByRole('alert').filter({ hasText: /Try again in \d+ s/ });
      await alert.waitFor({ timeout: 30_000 });
      const seconds = async () => Number(/Try again in (\d+) s/.exec(await alert.innerText())![1]);
      const first = await seconds();
      assert.ok(first > 1 && first <= 60, `${first} s`);
      await tab.waitForTimeout(2100);
      assert.ok((await seconds()) < first, 'it counts down');
    } finally {
      await tab.close();
      await limited.stop();
    }
  });

  test('keyboard: Tab reaches the key input, its buttons, the view links and a facet value; Enter on a facet filters', async () => {
    await page.goto(`${service.url}/explore/aggregate?metric=ggr&group_by=region&fx=USD&year=2024`);
    await page.getByLabel('API key', { exact: true }).fill(service.key);
    await page.keyboard.press('Enter');
    await answerTable();
    // A click on the heading moves the start of sequential focus navigation to the top.
    await page.getByRole('heading', { name: 'Explore', exact: true }).click();
    const reached = new Set<string>();
    for (let i = 0; i < 80; i++) {
      await page.keyboard.press('Tab');
      reached.add(
        await page.evaluate(() => {
          const el = document.activeElement as HTMLElement;
          return el.id || el.dataset.value || el.textContent?.trim() || el.tagName;
        }),
      );
      if (reached.has('Europe')) break;
    }
    for (const name of ['api-key', 'Use key', 'forget-key', 'Catalog', 'Aggregate', 'param-metric', 'Europe'])
      assert.ok(reached.has(name), `Tab reaches ${name}`);
    await page.keyboard.press('Enter');
    await page.waitForURL(/region=Europe/);
  });

  test('the key was in no URL the browser asked for, nor in localStorage or a cookie, and the CSP refused nothing', async () => {
    assert.ok(requested.length > 20);
    assert.equal(
      requested.filter((u) => u.includes(service.key)),
      [],
    );
    assert.not.ok(page.url().includes(service.key));
    assert.equal(
      requested.filter((u) => !/^(data|blob):/.test(u) && !ours.has(new URL(u).origin)),
      [],
    );
    assert.is(await page.evaluate(() => JSON.stringify(localStorage)), '{}');
    assert.equal(await browser.cookies(), []);
    assert.equal(cspErrors, []);
  });
  test.run();
}
