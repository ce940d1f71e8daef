import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CHROMIUM_MISSING } from '../tools/chromium.ts';
import { parseCsv } from './helpers/csv.ts';
import { jsonGrid, sameRows, tableOnPage } from './helpers/explore.ts';
import { type ExploreSession, exploreSession, seriousViolations } from './helpers/explore-browser.ts';
import type { TestService } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';

// The Explore page's charts as an analyst reads them (issue 57), in headless Chromium
// against a real server: bars from zero, fractions as percentages, long labels cut with
// their full text kept, and titles that name the unit.

if (CHROMIUM_MISSING) {
  skippedSuite('Explore charts in headless Chromium', CHROMIUM_MISSING);
} else {
  const test = suite('Explore charts in headless Chromium');
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
    await page.locator('figure.chart canvas').waitFor({ timeout: 30_000 });
  };
  const svgOf = async () => {
    const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download SVG' }).click()]);
    return fs.readFileSync((await file.path())!, 'utf8');
  };
  /**
   * Each bar's height in canvas pixels, left to right: the bar colour's pixels in the column at
   * its middle. Sent as source text: tsx names the inner functions with a helper the page lacks.
   */
  const barHeights = async (color: [number, number, number]): Promise<number[]> =>
    page.evaluate(`(([r, g, b]) => {
      const canvas = document.querySelector('figure.chart canvas');
      const { width, height } = canvas;
      const { data } = canvas.getContext('2d').getImageData(0, 0, width, height);
      const isBar = (x, y) => {
        const at = 4 * (y * width + x);
        return data[at] === r && data[at + 1] === g && data[at + 2] === b && data[at + 3] === 255;
      };
      let bottom = -1;
      for (let y = height - 1; y >= 0 && bottom < 0; y--) for (let x = 0; x < width && bottom < 0; x++) if (isBar(x, y)) bottom = y;
      const row = bottom - 2;
      const middles = [];
      for (let x = 0, start = -1; x <= width; x++) {
        const on = x < width && isBar(x, row);
        if (on && start < 0) start = x;
        if (!on && start >= 0) {
          middles.push(Math.floor((start + x - 1) / 2));
          start = -1;
        }
      }
      return middles.map((x) => {
        let n = 0;
        for (let y = 0; y < height; y++) if (isBar(x, y)) n++;
        return n;
      });
    })(${JSON.stringify(color)})`);

  test('a bar chart starts at zero: each bar is as long, against the longest, as its value is against the largest', async () => {
    // Each country's CAGR here is above zero (or none): an axis fitted to the data starts far above zero.
    await open('/explore/aggregate?metric=ggr&group_by=country&region=North+America&fx=USD&cagr=2010:2024');
    assert.is(await page.getByLabel('Measure charted').inputValue(), 'ggr_sum_cagr');
    const grid = await tableOnPage(page);
    const values = grid.rows
      .map((r) => r[grid.columns.indexOf('ggr_sum_cagr')]!)
      .filter((v) => v !== '—')
      .map(Number);
    assert.ok(values.length > 2 && values.every((v) => v > 0), `${values}`);
    const heights = await barHeights([0x1f, 0x5f, 0xa8]);
    assert.is(heights.length, values.length, `one bar per group: ${heights}`);
    const [hMax, vMax] = [Math.max(...heights), Math.max(...values)];
    for (const [i, v] of values.entries())
      assert.ok(Math.abs(heights[i]! / hMax - v / vMax) < 0.02 + 2 / hMax, `bar ${i}: ${heights[i]}px of ${hMax}, value ${v} of ${vMax}`);
  });

  test('a fraction (CAGR) is charted in percent, long labels are cut with their full text kept, and the title names the unit', async () => {
    await open('/explore/aggregate?metric=ggr&group_by=country&fx=USD&year=2024&cagr=2019:2024&region=Europe');
    assert.is(await page.getByLabel('Measure charted').inputValue(), 'ggr_sum_cagr');
    assert.match(await page.locator('figure.chart figcaption .chart-title').innerText(), /^ggr_sum_cagr by group \(%\)$/);
    const svg = await svgOf();
    const grid = await tableOnPage(page);
    const cagr = grid.columns.indexOf('ggr_sum_cagr');
    const shown = grid.rows;
    // Each bar's tooltip: its full label and its value as a percentage.
    const titles = [...svg.matchAll(/<rect [^>]*><title>(.*?): (-?[\d.,]+)%<\/title><\/rect>/g)];
    assert.is(titles.length, shown.filter((r) => r[cagr] !== '—').length, 'one titled bar per value');
    for (const [, label, pct] of titles) {
      const row = shown.find((r) => r[0] === label);
      assert.ok(row, `${label} is a row`);
      assert.ok(Math.abs(Number(pct) - 100 * Number(row[cagr])) < 0.5, `${label}: ${pct}% against ${row[cagr]}`);
    }
    // The axis' extremes as percentages.
    assert.ok((svg.match(/text-anchor="end">-?[\d.,]+%</g) ?? []).length === 2, 'both axis labels in %');
    // A long country name is cut with an ellipsis, its full text kept as the label's title.
    const long = shown.map((r) => r[0]!).find((c) => c.length > 12)!;
    assert.ok(long, 'a long name in the view');
    assert.match(svg, new RegExp(`<text [^>]*><title>${long}</title>[^<]*…</text>`));
    // An amount names its currency.
    await page.getByLabel('Measure charted').selectOption('ggr_sum');
    await page.locator('figure.chart figcaption', { hasText: 'ggr_sum by group (USD)' }).waitFor();
    assert.equal(await seriousViolations(page), [], 'axe on the charts');
  });

  /** Pixels of the forecast years' ground (chart.ts SHADE, #eceff3) on the canvas. */
  const shadedPixels = (): Promise<number> =>
    page.evaluate(`(() => {
      const canvas = document.querySelector('figure.chart canvas');
      const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
      let n = 0;
      for (let i = 0; i < data.length; i += 4) if (data[i] === 0xec && data[i + 1] === 0xef && data[i + 2] === 0xf3 && data[i + 3] === 255) n++;
      return n;
    })()`);

  test('forecast years are dashed on a shaded ground and named in the legend; the page says the view mixes them with actuals', async () => {
    // Which years are forecasts, as the rows say: grouped by year and temporal.
    const byTemporal = (await service.get('/v1/aggregate?metric=ggr&group_by=year,temporal&fx=USD')).json.data as any[];
    const projected = byTemporal.filter((r) => r.dimensions.temporal === 'Forecast').map((r) => r.dimensions.year as number);
    const actual = byTemporal.filter((r) => r.dimensions.temporal !== 'Forecast').map((r) => r.dimensions.year as number);
    assert.ok(projected.length > 1 && actual.length > 1, `${projected} forecast, ${actual} actual`);
    const [first, last] = [Math.min(...projected), Math.max(...projected)];
    assert.ok(Math.max(...actual) < first, 'forecasts follow the actual years');

    await open('/explore/aggregate?metric=ggr&group_by=region,year&fx=USD');
    const regions = new Set((await tableOnPage(page)).rows.map((r) => r[0])).size;
    const forecastEntry = page.locator('.legend li.forecast');
    assert.match(await forecastEntry.innerText(), `temporal=Forecast): ${first}–${last}`);
    assert.ok((await shadedPixels()) > 1000, 'the forecast years are shaded on the canvas');
    assert.match(await page.locator('.forecast-note').innerText(), `mixes actual years with forecasts: ${first}–${last}`);
    const svg = await svgOf();
    assert.is((svg.match(/<polyline [^>]*stroke-dasharray/g) ?? []).length, regions, 'one dashed forecast line per region');
    assert.is((svg.match(/<polyline (?![^>]*stroke-dasharray)/g) ?? []).length, regions, 'and one solid actual line');
    assert.equal(await seriousViolations(page), [], 'axe on a chart with forecasts');

    // Actuals alone: nothing to mark or say.
    await open('/explore/aggregate?metric=ggr&group_by=region,year&fx=USD&temporal=Current');
    assert.is(await forecastEntry.count(), 0);
    assert.is(await page.locator('.forecast-note').count(), 0);
    assert.is(await shadedPixels(), 0);
  });

  test('a wide view charts the last actual year, not the last forecast one', async () => {
    await open('/explore/aggregate?metric=ggr&group_by=region,year&fx=USD&shape=wide');
    const years = (await service.get('/v1/aggregate?metric=ggr&group_by=year&fx=USD&temporal=Current')).json.data.map(
      (r: any) => r.dimensions.year as number,
    );
    assert.is(await page.getByLabel('Measure charted').inputValue(), `ggr_sum_${Math.max(...years)}`);
    assert.match(await page.locator('.forecast-note').innerText(), /mixes actual years with forecasts/);
  });

  test("downloads say what they hold: an aggregate's whole-view CSV is the JSON walk row for row; a financials page is labelled a page", async () => {
    const query = 'metric=ggr&group_by=country,year&fx=USD&period=2020-01-01:2024-12-31&limit=50';
    await open(`/explore/aggregate?${query}`);
    // Every page of the JSON answer, walked by its cursor.
    const walked: any[] = [];
    for (let cursor = ''; ; ) {
      const page = (await service.get(`/v1/aggregate?${query}${cursor && `&cursor=${encodeURIComponent(cursor)}`}`)).json;
      walked.push(...page.data);
      if (!page.pagination.has_more) break;
      cursor = page.pagination.cursor;
    }
    assert.ok(walked.length > 100, `${walked.length} groups`);
    const csvButton = page.getByRole('button', { name: /^CSV — whole view \(every group, more than this page's 50\)$/ });
    await page.getByRole('button', { name: /^Arrow — whole view/ }).waitFor();
    const [csv] = await Promise.all([page.waitForEvent('download'), csvButton.click()]);
    const [columns = [], ...rows] = parseCsv(fs.readFileSync((await csv.path())!, 'utf8'), { anyLineEnd: true });
    assert.is(sameRows({ columns, rows }, jsonGrid(walked)), undefined);

    await open('/explore/financials?metric=ggr&country=France&limit=5');
    assert.is(await page.getByRole('button', { name: 'CSV — this page, 5 rows' }).count(), 1);
    assert.is(
      await page
        .getByRole('button', { name: /^Parquet — whole view \(every row, more than this page's 5, through \/v1\/export\)$/ })
        .count(),
      1,
    );
    // One page holds the whole view: its count is the view's.
    const few = 'metric=ggr&country=France&period=2020-01-01:2024-12-31';
    await open(`/explore/financials?${few}`);
    const answer = (await service.get(`/v1/financials?${few}`)).json;
    assert.ok(answer.data.length > 1 && !answer.pagination.has_more, `${answer.data.length} rows`);
    const n = answer.data.length;
    assert.is(await page.getByRole('button', { name: `CSV — this page, ${n} rows` }).count(), 1);
    assert.is(await page.getByRole('button', { name: `Parquet — whole view (${n} rows, through /v1/export)` }).count(), 1);
    assert.equal(await seriousViolations(page), [], 'axe on the downloads');
  });

  test.run();
}
