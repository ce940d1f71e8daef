import type Router from '@koa/router';
import * as v from 'valibot';
import type { Clock } from '../clock.ts';
import { NotFoundError } from '../errors/index.ts';
import { hashKey, looksLikeKey } from '../keys/key-format.ts';
import type { KeyStore } from '../keys/store.ts';
import { invalidParameters } from '../query/options/params.ts';
import { DAY_MS, dateOf, KEEP_DAYS } from '../usage/counts.ts';
import { DEFAULT_DAYS, dailyUsage } from '../usage/daily.ts';
import type { UsageLog } from '../usage/usage-log.ts';

// `npm run admin -- usage`: who uses the service, read from the same store as
// /v1/usage/daily (Redis with REDIS_URL: every replica's counts, summed).

const days = v.optional(
  v.pipe(
    v.union([v.number(), v.string()]),
    v.transform(Number),
    v.integer('Expected a whole number of days'),
    v.minValue(1),
    v.maxValue(KEEP_DAYS, `At most ${KEEP_DAYS} days are kept`),
  ),
  DEFAULT_DAYS,
);
const TOP_BY = ['requests', 'refused', 'exports', 'heavy_seconds'] as const;
const topQuery = v.object({
  days,
  top: v.optional(v.pipe(v.string(), v.transform(Number), v.integer('Expected a whole number of keys'), v.minValue(1)), '20'),
  by: v.optional(v.picklist(TOP_BY, `Expected one of ${TOP_BY.join(', ')}`), 'requests'),
});
const keyBody = v.object({ ref: v.pipe(v.string(), v.trim(), v.minLength(1, 'Give the key id (key_…) or the full key')), days });

/** The last `n` UTC days, today included. */
function lastDays(n: number, now: number): { start: string; end: string } {
  const today = Math.floor(now / DAY_MS);
  return { start: dateOf(today - n + 1), end: dateOf(today) };
}

const sum = (tally: Record<string, number>) => Object.values(tally).reduce((a, b) => a + b, 0);

export function register(router: Router, options: { usage: UsageLog; keys: KeyStore; clock: Clock }): void {
  const { usage, keys, clock } = options;
  router.get('/usage', async (ctx) => {
    const parsed = v.safeParse(topQuery, ctx.query);
    if (!parsed.success) throw invalidParameters(parsed.issues);
    const { start, end } = lastDays(parsed.output.days, clock());
    const [totals, records] = await Promise.all([usage.totals(start, end), keys.list()]);
    const clients = new Map(records.map((r) => [r.id, r.client]));
    const rows = [...totals].map(([id, t]) => ({
      id,
      client: clients.get(id) ?? null,
      requests: t.requests,
      refused: sum(t.refused),
      exports: t.exports,
      heavy_seconds: Math.round(t.heavy_ms) / 1000,
      bytes_sent: t.bytes_sent,
    }));
    const by = parsed.output.by;
    rows.sort((a, b) => b[by] - a[by] || b.requests - a.requests || (a.id < b.id ? -1 : 1));
    ctx.body = { start, end, by, keys: rows.slice(0, parsed.output.top) };
  });
  // A full key travels only in the body: a URL path reaches request logs and proxies.
  router.post('/usage/key', async (ctx) => {
    const parsed = v.safeParse(keyBody, ctx.request.body ?? {});
    if (!parsed.success) throw invalidParameters(parsed.issues);
    const { ref } = parsed.output;
    const hash = looksLikeKey(ref) ? hashKey(ref) : undefined;
    const record = (await keys.list()).find((r) => r.id === ref || r.hash === hash);
    if (!record) throw new NotFoundError('No key matches that id or key');
    const { start, end } = lastDays(parsed.output.days, clock());
    ctx.body = {
      key: { id: record.id, client: record.client, created_at: record.created_at, revoked_at: record.revoked_at },
      start,
      end,
      days: dailyUsage(await usage.days(record.id, start, end), start, end),
    };
  });
}
