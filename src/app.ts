import Router from '@koa/router';
import Koa from 'koa';
import { claimRoutes } from './claim/routes.ts';
import { requireKey } from './http/middleware/api-key.ts';
import { renderErrors } from './http/middleware/errors.ts';
import { guardQuery } from './http/middleware/query-guard.ts';
import { replayCachedAnswers } from './http/middleware/replay.ts';
import { ReplayTable } from './http/middleware/replay-table.ts';
import { assignRequestId } from './http/middleware/request-id.ts';
import { logRequests } from './http/middleware/request-log.ts';
import { countRequests } from './http/middleware/request-metrics.ts';
import { unmatched } from './http/middleware/unmatched.ts';
import { ROUTES } from './http/routes/index.ts';
import type { Services } from './services.ts';

export interface AppOptions {
  /** Behind a balancer: the client address is the last X-Forwarded-For hop. */
  readonly trustProxy?: boolean;
  /** Bound of the replay records of repeated requests (REPLAY_MAX_BYTES). */
  readonly replayMaxBytes?: number;
}

const REPLAY_MAX_BYTES = 8 * 1024 * 1024;

/**
 * The public API as a Koa app; it never listens (callers, tests included, do). Every
 * request takes the one path: its id, its count and log line, errors rendered as JSON,
 * the key and its limits, the claim pages, the query guard, a recorded answer for a
 * repeat, then its route (src/http/routes/index.ts).
 */
export function createApp(services: Services, options: AppOptions = {}): Koa {
  // maxIpsCount 1: only the hop our own balancer appended is trusted, not what the client wrote before it.
  const app = new Koa({ proxy: options.trustProxy ?? false, maxIpsCount: 1 });
  const router = new Router();
  for (const route of ROUTES) router.get(route.path, (ctx) => route.handle(ctx, services));
  const table = new ReplayTable(services.releases, options.replayMaxBytes ?? REPLAY_MAX_BYTES);

  app.use(assignRequestId());
  app.use(countRequests(services.metrics, 'public', router));
  app.use(logRequests(services.log));
  app.use(renderErrors(services.log));
  // Keys first: a refused query string from a valid key still counts and carries limit
  // headers; outside /v1 (the claim pages included) a valid key only gets its headers.
  app.use(requireKey(services));
  app.use(claimRoutes(services));
  app.use(guardQuery());
  app.use(replayCachedAnswers(services, table));
  app.use(router.routes());
  app.use(unmatched(router));
  return app;
}
