import { request } from 'undici';
import type { Captured } from '../ceilings/bare.ts';
import { LATE_SHARE, type PageSpec } from '../ceilings/duckdb-pages.ts';
import type { Request } from '../runner/load.ts';

// What the suite asks the service, and how each answer is checked before anything is
// timed. Every request is sent once for real and its answer captured: the bare
// ceiling replays exactly those bytes, and the timed runs expect them again.

export interface Scenario {
  readonly id: string;
  readonly title: string;
  /** The service's requests without the key header, which each server adds its own of. */
  readonly requests: readonly Request[];
  /** What the service answered to each request, in the same order. */
  readonly answers: readonly Captured[];
}

/** The issue's page: an uncached ggr page of 1000 rows with two filters. */
export const PAGE_FILTERS = new Map([
  ['region', ['Europe']],
  ['channel', ['Online']],
]);
export const PAGE = `/v1/financials?metric=ggr&${[...PAGE_FILTERS].map(([k, [v]]) => `${k}=${encodeURIComponent(v!)}`).join('&')}&limit=1000`;
const REFERENCE = '/v1/reference?dataset=country_reference&limit=1000';
const ACCEPT = { csv: 'text/csv', arrow: 'application/vnd.apache.arrow.stream' };

/** The query each query scenario runs, for its DuckDB-alone ceiling (bench/ceilings/duckdb-pages.ts). */
export const QUERY_SPECS = new Map<string, PageSpec>([
  ['uncached-page', { dataset: 'ggr', filters: PAGE_FILTERS, limit: 1000, page: 'first', format: 'json' }],
  ['late-page', { dataset: 'ggr', filters: PAGE_FILTERS, limit: 1000, page: 'late', format: 'json' }],
  ['csv-page', { dataset: 'ggr', filters: PAGE_FILTERS, limit: 1000, page: 'first', format: 'csv' }],
  ['arrow-page', { dataset: 'ggr', filters: PAGE_FILTERS, limit: 1000, page: 'first', format: 'arrow' }],
  ['reference', { dataset: 'country_reference', filters: new Map(), limit: 1000, page: 'first', format: 'json' }],
]);

type Check = (answer: Captured) => string | undefined;

/** Sends one GET and keeps its answer; throws, naming the request, unless `check` passes. */
export async function capture(
  url: string,
  path: string,
  headers: Record<string, string>,
  status: number,
  check?: Check,
): Promise<Captured> {
  const res = await request(`${url}${path}`, { headers });
  const body = Buffer.from(await res.body.arrayBuffer());
  const answer = { status: res.statusCode, headers: replayedHeaders(res.headers), body };
  const problem = res.statusCode !== status ? `status ${res.statusCode}, expected ${status}` : check?.(answer);
  if (problem) throw new Error(`${path} (${JSON.stringify(headers)}): ${problem}; ${body.toString().slice(0, 300)}`);
  return answer;
}

/** Set by any server per connection or per body, so not replayed as captured. */
const PER_CONNECTION = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

/** The headers a ceiling replays: every one the service sent but PER_CONNECTION (a repeated one joined, as Node joins them). */
function replayedHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !PER_CONNECTION.has(name)) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

export const scenario = (
  id: string,
  title: string,
  path: string,
  headers: Record<string, string>,
  answer: Captured,
  withBody = true,
): Scenario => ({
  id,
  title,
  requests: [{ path, headers, status: answer.status, ...(withBody && { body: answer.body }) }],
  answers: [answer],
});

const contains =
  (rows: Buffer | undefined): Check =>
  (answer) =>
    !rows || answer.body.includes(rows) ? undefined : 'the body does not hold the rows DuckDB returns for the same query in process';
const jsonError =
  (field: string): Check =>
  (answer) =>
    field in (JSON.parse(answer.body.toString()) as object) ? undefined : `the JSON error has no "${field}"`;

/** Scenarios on a server with the response cache off: every page is queried and rendered. */
export async function uncachedScenarios(url: string, key: Record<string, string>, rows: ReadonlyMap<string, Buffer>): Promise<Scenario[]> {
  const late = await lateCursor(url, key);
  const latePath = `${PAGE}&cursor=${late.cursor}`;
  const get = (path: string, headers: Record<string, string>, status: number, check?: Check) =>
    capture(url, path, { ...key, ...headers }, status, check);
  return [
    scenario(
      'uncached-page',
      'uncached filtered 1000-row page, JSON',
      PAGE,
      {},
      await get(PAGE, {}, 200, contains(rows.get('uncached-page'))),
    ),
    scenario(
      'late-page',
      `uncached late page (${late.index + 1}/${late.pages}), JSON`,
      latePath,
      {},
      await get(latePath, {}, 200, contains(rows.get('late-page'))),
    ),
    scenario(
      'csv-page',
      'uncached page, CSV',
      PAGE,
      { accept: ACCEPT.csv },
      await get(PAGE, { accept: ACCEPT.csv }, 200, contains(rows.get('csv-page'))),
    ),
    scenario(
      'arrow-page',
      'uncached page, Arrow',
      PAGE,
      { accept: ACCEPT.arrow },
      await get(PAGE, { accept: ACCEPT.arrow }, 200, contains(rows.get('arrow-page'))),
    ),
    scenario(
      'reference',
      '/v1/reference (205 rows), uncached',
      REFERENCE,
      {},
      await get(REFERENCE, {}, 200, contains(rows.get('reference'))),
    ),
    scenario(
      'catalog',
      '/v1/catalog',
      '/v1/catalog',
      {},
      await get('/v1/catalog', {}, 200, (a) => (JSON.parse(a.body.toString()).datasets?.length === 5 ? undefined : 'not the 5 datasets')),
    ),
    scenario(
      'bad-filter',
      '400: an invalid filter dimension',
      '/v1/financials?metric=ggr&colour=red',
      {},
      await get('/v1/financials?metric=ggr&colour=red', {}, 400, jsonError('error')),
    ),
  ];
}

/** Cached hits on a server with the defaults: the first request fills the cache, every timed one hits it. */
export async function cachedScenarios(url: string, key: Record<string, string>, uncachedPage: Captured): Promise<Scenario[]> {
  const out: Scenario[] = [];
  for (const [coding, title] of [
    ['identity', 'cached hit, JSON identity'],
    ['br', 'cached hit, JSON br'],
  ] as const) {
    const headers = { 'accept-encoding': coding };
    await capture(url, PAGE, { ...key, ...headers }, 200);
    const hit = await capture(url, PAGE, { ...key, ...headers }, 200, (a) =>
      coding === 'br'
        ? a.headers['content-encoding'] === 'br'
          ? undefined
          : 'not br-encoded'
        : a.body.equals(uncachedPage.body)
          ? undefined
          : 'a hit differs from the uncached page',
    );
    out.push(scenario(`cached-${coding === 'br' ? 'br' : 'json'}`, title, PAGE, headers, hit));
  }
  return out;
}

/**
 * 401 and 429 on a server with limits on: RATE_LIMIT_PER_DAY=1, spent by one request
 * here, so every later request on that key is refused (refused requests consume
 * nothing), and BAD_KEY_LIMIT_PER_MINUTE raised so the bad-key guard, which would turn
 * a flood of 401s into 429s after 30 a minute, lets the 401s through.
 */
export async function limitScenarios(url: string, key: Record<string, string>): Promise<Scenario[]> {
  await capture(url, '/v1/catalog', key, 200);
  const badKey = { 'x-api-key': `sk_live_${'0'.repeat(40)}` };
  // A 429's Retry-After and body count down with time: checked for shape, timed by status.
  return [
    scenario('unauthorized', '401: an unknown API key', PAGE, badKey, await capture(url, PAGE, badKey, 401, jsonError('error'))),
    scenario(
      'rate-limited',
      '429: a key over its limit',
      PAGE,
      {},
      await capture(url, PAGE, key, 429, jsonError('retryAfterSeconds')),
      false,
    ),
  ];
}

/** A cursor LATE_SHARE of the way through the page's walk, found the way a client finds it. */
async function lateCursor(url: string, key: Record<string, string>) {
  const starts = [''];
  for (let cursor = ''; ; ) {
    const res = await request(`${url}${PAGE}${cursor ? `&cursor=${cursor}` : ''}`, { headers: key });
    cursor = ((await res.body.json()) as { pagination: { cursor: string } }).pagination.cursor;
    if (!cursor) break;
    starts.push(cursor);
  }
  const index = Math.floor(starts.length * LATE_SHARE);
  return { cursor: starts[index]!, index, pages: starts.length };
}

/** The scenario's requests with a server's key header. */
export const withKey = (requests: readonly Request[], key: Record<string, string>) =>
  requests.map((r) => ({ ...r, headers: { ...key, ...r.headers } }));
