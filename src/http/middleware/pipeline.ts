import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Services } from '../../services.ts';
import { admitKey } from './api-key.ts';
import { renderError } from './errors.ts';
import { checkQuery } from './query-guard.ts';
import { replayOrRecord } from './replay.ts';
import type { ReplayTable } from './replay-table.ts';
import { nameRequest } from './request-id.ts';
import { requestLine, requestLogger } from './request-log.ts';
import { requestCounter, routeOf } from './request-metrics.ts';

/**
 * The one path every request to the public listener takes, each step a function of
 * its own, in this order: the request gets its id; its key is checked and charged to
 * its limits (src/http/middleware/api-key.ts), first, so that a refused query string
 * from a valid key still counts and carries limit headers; its query string is bounded; a repeat
 * is answered from the record of its first answer, anything else by the rest of the
 * chain (the claim pages, then the routes); an error becomes the spec's JSON; and
 * whatever the answer, it is counted and logged.
 */
export function publicPipeline(services: Services, table: ReplayTable, router: Router): Middleware {
  const count = requestCounter(services.metrics, 'public');
  const { log } = services;
  const logRequest = requestLogger(log);
  return async (ctx, next) => {
    const started = performance.now();
    nameRequest(ctx);
    try {
      await admitKey(ctx, services);
      checkQuery(ctx.querystring);
      await replayOrRecord(ctx, services, table, next);
    } catch (err) {
      renderError(ctx, err, log);
    } finally {
      const ms = performance.now() - started;
      count(routeOf(ctx, router), ctx.status, ctx.state.errorCode ?? '', ms / 1000);
      logRequest(requestLine(ctx, ms));
    }
  };
}
