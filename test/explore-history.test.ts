import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CHROMIUM_MISSING } from '../tools/chromium.ts';
import { parseCsv } from './helpers/csv.ts';
import { type Grid, jsonGrid, PYTHON, RSCRIPT, runSnippet, sameRows, snippetClientsDir, tableOnPage } from './helpers/explore.ts';
import { type ExploreBrowser, launchExplore, seriousViolations } from './helpers/explore-browser.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';
import { ggrIn, R1, R2, R3, type Vintages, vintages } from './helpers/vintages.ts';

// The Explore page's history (issue 52): /explore/history shows /v1/history, and each
// row of a financials view links to its observation's history, in headless Chromium
// against a server of three releases written by plain DuckDB (helpers/vintages.ts:
// A added in R1, changed in R2, removed in R3; D changed in R2 and back in R3).

if (CHROMIUM_MISSING) {
  skippedSuite('Explore history in headless Chromium', CHROMIUM_MISSING);
} else {
  const test = suite('Explore history in headless Chromium');
  let data: Vintages;
  let service: TestService;
  let chromium: ExploreBrowser | undefined;
  let page: Page;
  test.before(async () => {
    data = await vintages({ rolledBack: false });
    // The pandas and R snippets install their client from this server, as they show.
    service = await startTestService({ dataDir: data.dataDir, env: { CLIENTS_DIR: await snippetClientsDir() } });
    chromium = await launchExplore(service.url);
    page = chromium.page;
    await page.goto(`${service.url}/explore`);
    await page.getByLabel('API key', { exact: true }).fill(service.key);
    await page.getByRole('button', { name: 'Use key' }).click();
    await page.getByRole('heading', { name: 'Catalog' }).waitFor();
  });
  test.after(async () => {
    await chromium?.close();
    await service?.stop();
    await data?.remove();
  });

  const here = () => {
    const url = new URL(page.url());
    return url.pathname + url.search;
  };
  /** Waits for the view of `endpoint` to be drawn: its table, or its refusal. */
  const shown = async (endpoint: string) => {
    await page.locator('#view h2', { hasText: `/v1/${endpoint}` }).waitFor({ timeout: 30_000 });
    await page.locator('#view table.answer, #view [role=alert]').first().waitFor({ timeout: 30_000 });
  };
  const open = async (endpoint: string, query: string) => {
    await page.goto(`${service.url}/explore/${endpoint}?${query}`);
    await shown(endpoint);
  };
  /** The page's query string of an observation's history: the dataset and each dimension's value. */
  const observation = (dims: Readonly<Record<string, string | number>>) =>
    Object.entries(dims).map(([k, v]) => [k, String(v)] as [string, string]);
  /** The table's history links whose URL names exactly `dims`, and no other (`count` of them: one per row of it). */
  const linkOf = async (dims: Readonly<Record<string, string | number>>, count = 1) => {
    const hrefs = await page.locator('table.answer td.action a').evaluateAll((links) => links.map((a) => [a.id, a.getAttribute('href')!]));
    const want = JSON.stringify([['metric', 'ggr'], ...observation(dims)].sort());
    const found = hrefs.filter(([, href]) => {
      const url = new URL(href!, service.url);
      return url.pathname === '/explore/history' && JSON.stringify([...url.searchParams].sort()) === want;
    });
    assert.is(found.length, count, `links to the history of ${JSON.stringify(dims)} among ${hrefs.length}`);
    return { id: found[0]![0]!, href: found[0]![1]! };
  };
  /** /v1/history's CSV of a query (one page, so no export is charged): the server's own rendering, not the page's. */
  const historyCsv = async (query: string): Promise<Grid> => {
    const res = await service.get(`/v1/history?${query}&format=csv&limit=1000`);
    assert.is(res.status, 200, res.text);
    const [columns = [], ...rows] = parseCsv(res.text);
    return { columns, rows };
  };
  /** The chart's SVG download: the points of its one line. */
  const svgPoints = async () => {
    const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download SVG' }).click()]);
    const svg = fs.readFileSync((await file.path())!, 'utf8');
    const lines = [...svg.matchAll(/<polyline[^>]* points="([^"]*)"/g)].map((m) => m[1]!.split(' ').length);
    return lines;
  };

  test('a financials row opens its observation’s history by keyboard: the rows /v1/history answers, its value by release charted, Back returns to the table', async () => {
    const D = data.observations.D;
    const financials = new URLSearchParams({
      metric: 'ggr',
      region: String(D.region),
      category: String(D.category),
      year: String(D.year),
    }).toString();
    await open('financials', financials);
    const rows = (await service.get(`/v1/financials?${financials}`)).json.data;
    assert.ok(rows.length > 2 && rows.length < 100, `${rows.length} rows, on one page`);
    // Each row has its link, named by the values that tell the rows apart.
    const links = page.getByRole('link', { name: /^History of ggr 2000, / });
    assert.is(await links.count(), rows.length);
    const { id, href } = await linkOf(D);
    const name = await page.locator(`#${id}`).evaluate((a) => a.textContent);
    assert.match(name!, new RegExp(`^History of ggr 2000, .*${D.product}`));
    // The table's values are unchanged by the link column.
    assert.is(sameRows(await tableOnPage(page), jsonGrid(rows)), undefined);
    assert.equal(await seriousViolations(page), []);

    // Tab from the table reaches the link: it is in the tab order, not only clickable.
    await page.locator('#answer').focus();
    let tabs = 0;
    while ((await page.evaluate(() => document.activeElement?.id)) !== id) {
      assert.ok(++tabs <= rows.length, `${id} reached within ${rows.length} Tabs`);
      await page.keyboard.press('Tab');
    }
    await page.keyboard.press('Enter');
    await shown('history');
    assert.is(here(), href);
    // Back before anything else is touched: the table, and focus on the link that opened the history.
    await page.goBack();
    await shown('financials');
    assert.is(here(), `/explore/financials?${financials}`);
    await page.waitForFunction((wanted) => document.activeElement?.id === wanted, id);
    await page.goForward();
    await shown('history');
    assert.is(here(), href);

    const query = new URL(href, service.url).search.slice(1);
    const answer = (await service.get(`/v1/history?${query}`)).json;
    assert.equal(
      answer.data.map((r: any) => [r.change, r.valid_from]),
      [
        ['added', R1],
        ['changed', R2],
        ['changed', R3],
      ],
    );
    for (const row of answer.data) assert.equal(row.dimensions, D, 'each row is the observation');
    const onPage = await tableOnPage(page);
    assert.is(sameRows(onPage, jsonGrid(answer.data)), undefined);
    assert.is(sameRows(onPage, await historyCsv(query)), undefined);
    // Each value as plain DuckDB reads it from the release it was published in.
    const ggr = onPage.columns.indexOf('ggr');
    for (const [i, release] of [R1, R2, R3].entries())
      assert.is(Number(onPage.rows[i]![ggr]), await ggrIn(data.files[release]!, D), `ggr valid from ${release}`);
    // One observation: its value by release, the three releases of the range.
    const summary = await page.locator('.chart .chart-summary').innerText();
    assert.is(summary, `ggr by release (${D.fx}): 1 line (ggr), ${R1} to ${R3}.`);
    assert.equal(await svgPoints(), [3]);
    // What a history view is about comes first; the shape of `all` under More options.
    assert.is(await page.locator('details.more #param-output').count(), 0);
    assert.is(await page.locator('#param-output').inputValue(), '');
    assert.is(await page.locator('details.more #param-shape').count(), 1);
    assert.is(await page.locator(`#param-country`).inputValue(), String(D.country));
    assert.equal(await seriousViolations(page), []);
  });

  test('a removed observation’s history from an as_of view: no release carried, the removal an empty value, the line ending', async () => {
    const A = data.observations.A;
    // A is in no current row: read the release served on 10 February, R2.
    const financials = new URLSearchParams({ metric: 'ggr', country: String(A.country), year: String(A.year), as_of: '2026-02-10' });
    await open('financials', financials.toString());
    await page.locator('table.answer caption', { hasText: `release ${R2}` }).waitFor();
    const { href } = await linkOf(A);
    await page.locator(`a[href="${href}"]`).click();
    await shown('history');
    const query = new URL(href, service.url).search.slice(1);
    const answer = (await service.get(`/v1/history?${query}`)).json;
    assert.equal(
      answer.data.map((r: any) => [r.change, r.valid_from, r.valid_to, r.values]),
      [
        ['added', R1, R2, { ggr: await ggrIn(data.files[R1]!, A) }],
        ['changed', R2, R3, { ggr: await ggrIn(data.files[R2]!, A) }],
        ['removed', R3, null, null],
      ],
    );
    const onPage = await tableOnPage(page);
    assert.is(sameRows(onPage, await historyCsv(query)), undefined);
    assert.is(onPage.rows[2]![onPage.columns.indexOf('ggr')], '—');
    // Drawn over R1 and R2; nothing in R3, where it was removed.
    assert.equal(await svgPoints(), [2]);
  });

  test('output=all, output=first, and a history of several observations: the rows /v1/history answers, each row linked, a chart only for one', async () => {
    const D = data.observations.D;
    const one = new URLSearchParams([['metric', 'ggr'], ...observation(D)]);
    await open('history', one.toString());
    await page.locator('#param-output').selectOption('all');
    await page.waitForURL((url) => url.searchParams.get('output') === 'all');
    await page
      .locator('table.answer thead th')
      .filter({ hasText: /^release$/ })
      .waitFor();
    const all = new URL(page.url()).search.slice(1);
    assert.is(sameRows(await tableOnPage(page), await historyCsv(all)), undefined);
    assert.ok(await page.locator('.chart .chart-summary').isVisible(), 'one observation in every release: charted');

    await page.locator('#param-output').selectOption('first');
    await page.waitForURL((url) => url.searchParams.get('output') === 'first');
    await page
      .locator('table.answer thead th')
      .filter({ hasText: /^first_release$/ })
      .waitFor();
    assert.is(sameRows(await tableOnPage(page), await historyCsv(new URL(page.url()).search.slice(1))), undefined);
    assert.is(await page.locator('.chart').count(), 0);
    await page.getByText(/^No chart: a history is drawn for one observation/).waitFor();

    const several = new URLSearchParams({ metric: 'ggr', country: String(D.country), year: String(D.year) }).toString();
    await open('history', several);
    assert.is(sameRows(await tableOnPage(page), await historyCsv(several)), undefined);
    assert.is(await page.locator('.chart').count(), 0);
    // Each row links to its own observation's history: D's three rows to D's.
    const { href } = await linkOf(D, 3);
    assert.is(href, `/explore/history?${one}`);
    assert.equal(await seriousViolations(page), []);
  });

  test('copy as curl, pandas, R, TypeScript and the CLI: each, run as shown, returns the rows of a history view and of an as_of view', async () => {
    const missing: Record<string, string | undefined> = {
      pandas: fs.existsSync(PYTHON) ? undefined : `no ${PYTHON} (apt-get install python3-pandas)`,
      R: RSCRIPT ? undefined : 'no Rscript (apt-get install r-base-core)',
    };
    const A = data.observations.A;
    // A's history has a removed row (empty values) and state "", which pandas and R would read as missing; the as_of view is R2's rows.
    const views: [string, string][] = [
      ['history', new URLSearchParams([['metric', 'ggr'], ...observation(A)]).toString()],
      ['financials', `metric=ggr&region=${encodeURIComponent(String(A.region))}&year=${A.year}&as_of=2026-02-10`],
    ];
    for (const [endpoint, query] of views) {
      await open(endpoint, query);
      const shown = await tableOnPage(page);
      assert.is(sameRows(shown, jsonGrid((await service.get(`/v1/${endpoint}?${query}`)).json.data)), undefined, query);
      for (const kind of ['curl', 'pandas', 'R', 'TypeScript', 'CLI']) {
        await page.locator(`button[data-snippet="${kind}"]`).click();
        await page.locator(`#snippet[data-kind="${kind}"]`).waitFor();
        const code = await page.locator('#snippet').innerText();
        if (missing[kind]) {
          console.log(`${kind} snippet: skipped: ${missing[kind]}`);
          continue;
        }
        assert.is(sameRows(await runSnippet(kind, code, service.key), shown), undefined, `${kind} on /explore/${endpoint}?${query}`);
      }
    }
  });

  test('as_of sits beside release under More options; both set is the 400 said beside each', async () => {
    const query = 'metric=ggr&country=Albania&year=2000';
    await open('financials', query);
    const more = page.locator('details.more');
    assert.is(await more.getAttribute('open'), null);
    const neighbours = await page
      .locator('details.more #param-release')
      .evaluate((field) => (field.closest('.control')!.nextElementSibling as HTMLElement | null)?.querySelector('input, select')?.id);
    assert.is(neighbours, 'param-as_of');

    await open('financials', `${query}&release=${R1}&as_of=2026-02-10`);
    assert.is(await more.getAttribute('open'), '', 'open: its options are set');
    assert.match(await page.locator('#note-as_of').innerText(), /^Give as_of or release, not both/);
    assert.match(await page.locator('#note-release').innerText(), /^Give release or as_of, not both/);
    assert.is(await page.locator('#param-as_of').getAttribute('aria-invalid'), 'true');
    assert.is(await page.locator('#param-release').getAttribute('aria-invalid'), 'true');
    assert.equal(await seriousViolations(page), []);
  });

  test.run();
}
