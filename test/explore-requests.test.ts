import type { Page, Request } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CHROMIUM_MISSING } from '../tools/chromium.ts';
import { type ExploreBrowser, launchExplore } from './helpers/explore-browser.ts';
import { send, startTestService, type TestService } from './helpers/service.ts';
import { requiring } from './helpers/skip.ts';

// What the Explore page asks the API for (issue 57, "one request per change where the
// API allows"), counted in Chromium against a real server: every request the page
// makes is recorded, and a control change costs at most the answer and its facets,
// with no URL asked twice in the page's life except conditionally (If-None-Match).
// And on the server: /v1/facets keys an aggregate view's counts by the national-rows
// rule's outcome, not by the grouping, so groupings with one outcome share an answer.

let service: TestService;
/** A server whose answers are never fresh (`max-age=0`): every repeat is a revalidation. */
let revalidating: TestService;
const test = suite('Explore requests: one per change');
test.before(async () => {
  service = await startTestService();
  revalidating = await startTestService({ dataDir: service.dataDir, env: { CACHE_MAX_AGE_SECONDS: '0' } });
});
test.after(async () => {
  await service?.stop();
  await revalidating?.stop();
});

/** A counter's value on the admin listener's /metrics (0 while it has none). */
async function counter(name: string, labels = ''): Promise<number> {
  const text = (await send(`${service.adminUrl}/metrics`)).text;
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return Number(line?.split(' ').at(-1) ?? 0);
}

test('/v1/facets with endpoint=aggregate: group_by=region and group_by=country share one answer, one ETag and one query', async () => {
  const view = '/v1/facets?metric=ggr&endpoint=aggregate&fx=EUR&year=2021';
  const lookups = async () => ({
    hit: await counter('dqs_response_cache_lookups_total', 'result="hit"'),
    miss: await counter('dqs_response_cache_lookups_total', 'result="miss"'),
    queries: await counter('dqs_duckdb_query_seconds_count'),
  });
  const before = await lookups();
  const region = await service.get(`${view}&group_by=region`);
  const mid = await lookups();
  const country = await service.get(`${view}&group_by=country`);
  const after = await lookups();
  assert.is(region.status, 200, region.text);
  assert.is(country.status, 200, country.text);
  assert.ok(region.json.meta.totals_rule, 'the national-rows rule applies to both groupings');
  assert.is(mid.miss - before.miss, 1, 'the first grouping is counted');
  assert.ok(mid.queries > before.queries, 'by DuckDB');
  assert.is(country.headers.etag, region.headers.etag, 'one ETag');
  assert.is(country.text, region.text, 'one answer');
  assert.is(after.hit - mid.hit, 1, 'the second grouping is a response-cache hit');
  assert.is(after.miss - mid.miss, 0);
  assert.is(after.queries, mid.queries, 'and runs no query');
  // Conditional across groupings: the ETag of one is a 304 for the other.
  const revalidated = await service.get(`${view}&group_by=country`, { headers: { 'if-none-match': String(region.headers.etag) } });
  assert.is(revalidated.status, 304);
  // A grouping or a filter that lifts the rule counts other rows, or names no rule: another answer.
  const byState = await service.get(`${view}&group_by=region,state`);
  assert.is(byState.json.meta.totals_rule, undefined);
  assert.is.not(byState.headers.etag, region.headers.etag);
  const nationalByFilter = await service.get(`${view}&group_by=region&state=`);
  assert.is(nationalByFilter.json.meta.totals_rule, undefined, 'a state filter lifts the rule');
  assert.equal(nationalByFilter.json.data, region.json.data, 'the same national rows, counted');
  assert.is.not(nationalByFilter.headers.etag, region.headers.etag, 'but not the same answer: its meta names no rule');
});

/** One request the page made: its URL, and whether it was conditional. */
interface Asked {
  readonly url: string;
  readonly conditional: boolean;
  readonly request: Request;
}

/** Records what the page asks of this origin's API (/v1 and /openapi.json), and knows when none is under way. */
function recorder(page: Page) {
  const asked: Asked[] = [];
  let open = 0;
  // The usage panel's /v1/usage, asked after answers, is counted in test/explore-usage.test.ts.
  const api = (url: string) => /^\/(v1\/(?!usage$)|openapi\.json)/.test(new URL(url).pathname);
  page.on('request', (request) => {
    if (!api(request.url())) return;
    open++;
    asked.push({ url: request.url(), conditional: 'if-none-match' in request.headers(), request });
  });
  const done = (request: Request) => {
    if (api(request.url())) open--;
  };
  page.on('requestfinished', done);
  page.on('requestfailed', done);
  return {
    asked,
    /** Resolves once the view is drawn (no part of it busy) and no request is under way. */
    async settled() {
      await page.waitForFunction(
        () => document.querySelector('#view table.answer') && !document.querySelector('#view [aria-busy="true"]'),
        null,
        {
          timeout: 60_000,
        },
      );
      for (const started = Date.now(); open > 0; await new Promise((resolve) => setTimeout(resolve, 20))) {
        if (Date.now() - started > 60_000) throw new Error(`${open} requests still open`);
      }
    },
  };
}

const status = async ({ request }: Asked) => (await request.response())?.status();

/** The requests of `step`, each as `path?query` and its status (304: revalidated). */
async function describe(step: readonly Asked[]): Promise<string[]> {
  return Promise.all(
    step.map(async (asked) => {
      const u = new URL(asked.url);
      return `${u.pathname}${u.search} ${await status(asked)}`;
    }),
  );
}

const browserTest = (name: string, run: (page: Page, server: TestService) => Promise<void>, server = () => service) =>
  requiring(
    test,
    CHROMIUM_MISSING,
    'explore-requests',
  )(name, async () => {
    let chromium: ExploreBrowser | undefined;
    try {
      chromium = await launchExplore(server().url, { width: 1400, height: 1000 });
      await run(chromium.page, server());
    } finally {
      await chromium?.close();
    }
  });

/**
 * Catalog → "Aggregate ggr" → a region chip on, off and on again, then the key forgotten
 * and typed again: each step's requests (the figures are printed for the issue's note).
 */
async function walk(page: Page, server: TestService) {
  const { asked, settled } = recorder(page);
  const useKey = async () => {
    await page.getByLabel('API key', { exact: true }).fill(server.key);
    await page.getByRole('button', { name: 'Use key' }).click();
  };
  await page.goto(`${server.url}/explore`);
  await useKey();
  await page.getByRole('heading', { name: 'Catalog' }).waitFor({ timeout: 60_000 });
  const figures: string[] = [`catalog: ${asked.length}`];
  const steps: Asked[][] = [];
  const step = async (name: string, act: () => Promise<void>) => {
    const from = asked.length;
    await act();
    await settled();
    steps.push(asked.slice(from));
    figures.push(`${name}: ${asked.length - from} (${(await describe(asked.slice(from))).join(', ')})`);
  };
  await step('first view (catalog → Aggregate ggr)', async () => {
    await page.getByRole('link', { name: 'Aggregate ggr' }).click();
    await page.waitForURL(/\/explore\/aggregate/);
  });
  const europe = 'button[data-facet="region"][data-value="Europe"]';
  const chip = (on: boolean) => async () => {
    await page.locator(europe).click();
    await page.waitForURL((url) => url.searchParams.has('region') === on);
    await page.locator(`${europe}[aria-pressed="${on}"]`).waitFor({ timeout: 60_000 });
  };
  await step('chip on', chip(true));
  await step('chip off (back to the first view)', chip(false));
  await step('chip on again', chip(true));
  await step('key forgotten and typed again', async () => {
    await page.getByRole('button', { name: 'Forget key' }).click();
    await useKey();
  });
  console.log(`explore-requests (${server === service ? 'default Cache-Control' : 'max-age=0'}): ${figures.join('; ')}`);
  const [first, on, off, again, rekeyed] = steps as [Asked[], Asked[], Asked[], Asked[], Asked[]];
  const v1 = (requests: readonly Asked[]) => requests.filter((r) => new URL(r.url).pathname.startsWith('/v1/'));
  const full = (requests: readonly Asked[]) => requests.filter((r) => !r.conditional);
  // At most the answer and its facets asked in full per change; the first view adds the forecast years.
  assert.ok(full(v1(on)).length <= 2, `a chip click: ${figures[2]}`);
  assert.ok(full(v1(first)).length <= 3, `the first view: ${figures[1]}`);
  // Back to views already answered: nothing asked in full.
  assert.equal(
    full(off).map((r) => r.url),
    [],
    figures[3],
  );
  assert.equal(
    full(again).map((r) => r.url),
    [],
    figures[4],
  );
  // In the page's life under one key, each URL is asked in full once: any repeat is a revalidation.
  const seen = new Set<string>();
  for (const { url, conditional } of asked.slice(0, asked.length - rekeyed.length)) {
    assert.ok(!seen.has(url) || conditional, `${url} asked again without If-None-Match`);
    seen.add(url);
  }
  // A key forgotten empties the store: its answers are not the next key's.
  const answer = `${server.url}/explore/aggregate?metric=ggr&fx=USD&region=Europe`.replace('/explore/', '/v1/');
  assert.ok(
    full(rekeyed).some((r) => r.url === answer),
    `after the key is typed again the answer is asked in full: ${figures[5]}`,
  );
  return { on, off, again };
}

browserTest(
  'catalog → aggregate, a facet chip on and off: at most answer + facets per change, a view answered before reused unasked',
  async (page, server) => {
    const { off, again } = await walk(page, server);
    // The server's Cache-Control (max-age=86400) keeps them fresh: not even a 304 is asked for.
    assert.is(off.length + again.length, 0);
  },
);

browserTest(
  'the same with answers never fresh (max-age=0): a view answered before is asked with If-None-Match and reused on 304',
  async (page, server) => {
    const { on, off } = await walk(page, server);
    assert.ok(off.length >= 2, 'revalidated');
    for (const asked of off) {
      assert.ok(asked.conditional, `${asked.url} sent If-None-Match`);
      assert.is(await status(asked), 304, asked.url);
    }
    // Revalidations aside, a chip click asks for the answer and its facets alone.
    assert.is(on.filter((r) => !r.conditional).length, 2);
  },
  () => revalidating,
);

browserTest('the table does not wait for the forecast years; the chart marks them once they arrive', async (page) => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let forecastAsked = 0;
  // The forecast-years request alone is held (not answered by the test): the page must draw without it.
  await page.route(
    (url) => url.pathname === '/v1/facets' && url.searchParams.get('temporal') === 'Forecast',
    async (route) => {
      forecastAsked++;
      await held;
      await route.continue();
    },
  );
  await page.goto(`${service.url}/explore`);
  await page.evaluate((key) => sessionStorage.setItem('dqs-explore-key', key), service.key);
  await page.goto(`${service.url}/explore/aggregate?metric=ggr&fx=USD&group_by=region,year`);
  await page.locator('table.answer').waitFor({ timeout: 60_000 });
  assert.is(forecastAsked, 1, 'the forecast years are asked for, and held');
  // The chart waits for them, so that it is drawn once, marked: no chart redrawn under the reader's eyes.
  assert.is(await page.locator('figure.chart').count(), 0, 'no chart before the forecast years are known');
  release();
  await page.locator('.legend li.forecast').waitFor({ timeout: 60_000 });
  assert.match(await page.locator('.legend li.forecast').innerText(), /temporal=Forecast/);
  assert.is(await page.locator('figure.chart').count(), 1, 'one chart, drawn once');
});

test.run();
