import { InvalidParametersError, UsageUnavailableError } from '../../errors/index.ts';
import { unknownKeys } from '../../query/options/params.ts';
import { dailyCsv, dailyRange, dailyUsage } from '../../usage/daily.ts';
import { setLimitHeaders } from '../middleware/limit-headers.ts';
import { USAGE_DAILY_SCHEMAS, USAGE_SCHEMAS, usageDailyOperation, usageOperation } from '../openapi/operations/usage.ts';
import type { RequestContext } from '../request-state.ts';
import { requestKey } from '../respond/request-key.ts';
import { usageNow } from '../respond/usage-now.ts';
import type { Route } from './route.ts';

// GET /v1/usage and GET /v1/usage/daily (docs/api.md "Usage"): the calling key's
// limits now, and its days. Neither counts against the key's limits (only against
// USAGE_LIMIT_PER_MINUTE, middleware/api-key.ts), neither is counted in its usage,
// and neither is cached: each answer is of its moment.

function refuseUnknown(ctx: RequestContext, known: readonly string[]): void {
  const unknown = unknownKeys(ctx.query, (key) => known.includes(key));
  if (unknown.length)
    throw new InvalidParametersError(
      Object.fromEntries(unknown.map((key) => [key, [`Unknown parameter: ${ctx.path} takes ${known.length ? known.join(', ') : 'none'}`]])),
    );
}

export const usage: Route = {
  path: '/v1/usage',
  async handle(ctx, services) {
    refuseUnknown(ctx, []);
    const { body, requests } = await usageNow(services, requestKey(ctx));
    // The same reading as `binding`, not the key step's a moment before.
    setLimitHeaders(ctx, requests);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = body;
  },
  operation: usageOperation,
  schemas: USAGE_SCHEMAS,
};

const single = (value: string | string[] | undefined) => (Array.isArray(value) ? value.at(-1) : value);

export const usageDaily: Route = {
  path: '/v1/usage/daily',
  async handle(ctx, services) {
    refuseUnknown(ctx, ['start', 'end', 'format']);
    const format = single(ctx.query.format) ?? 'json';
    const range = dailyRange({ start: single(ctx.query.start), end: single(ctx.query.end) }, services.clock());
    const errors = 'errors' in range ? range.errors : {};
    if (format !== 'json' && format !== 'csv') errors.format = [`Expected json or csv, received '${format.slice(0, 40)}'`];
    if (Object.keys(errors).length > 0 || 'errors' in range) throw new InvalidParametersError(errors);
    const { id } = requestKey(ctx);
    const stored = await services.usage.log.days(id, range.start, range.end).catch(() => {
      throw new UsageUnavailableError();
    });
    const days = dailyUsage(stored, range.start, range.end);
    ctx.set('Cache-Control', 'no-store');
    if (format === 'csv') {
      ctx.type = 'text/csv; charset=utf-8';
      ctx.body = dailyCsv(days);
    } else ctx.body = { key: id, start: range.start, end: range.end, days };
  },
  operation: usageDailyOperation,
  schemas: USAGE_DAILY_SCHEMAS,
};
