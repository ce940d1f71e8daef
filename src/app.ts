import type http from 'node:http';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import { MethodNotAllowedError, NotFoundError } from './errors.ts';
import { requireKey } from './http/auth.ts';
import { claimRoutes } from './claim/routes.ts';
import * as aggregate from './http/aggregate.ts';
import * as catalog from './http/catalog.ts';
import * as docs from './http/docs.ts';
import { renderErrors } from './http/errors.ts';
import * as exporter from './http/export.ts';
import * as financials from './http/financials.ts';
import * as healthz from './http/healthz.ts';
import * as reference from './http/reference.ts';
import * as releases from './http/releases.ts';
import * as revisions from './http/revisions.ts';
import { guardQuery } from './http/query-guard.ts';
import { fastReplay } from './http/fast-replay.ts';
import { replayCachedAnswers } from './http/replay.ts';
import { ReplayTable } from './http/replay-table.ts';
import { assignRequestId } from './http/request-id.ts';
import { logRequests } from './http/request-log.ts';
import { countRequests } from './http/request-metrics.ts';
import type { Services } from './services.ts';

export interface AppOptions {
  /** Behind a balancer: the client address is the last X-Forwarded-For hop. */
  readonly trustProxy?: boolean;
  /** Bound of the replay records of repeated requests (REPLAY_MAX_BYTES). */
  readonly replayMaxBytes?: number;
}

const REPLAY_MAX_BYTES = 8 * 1024 * 1024;

/**
 * The public listener's request handler: a repeated request with a recorded answer
 * is answered below Koa (src/http/fast-replay.ts), everything else by the app.
 */
export function createPublicHandler(services: Services, options: AppOptions = {}): http.RequestListener {
  const table = new ReplayTable(services, options.replayMaxBytes ?? REPLAY_MAX_BYTES);
  return fastReplay(services, table, createApp(services, options, table).callback());
}

/** The public API as a Koa app; it never listens (callers, tests included, do). */
export function createApp(services: Services, options: AppOptions = {}, table = new ReplayTable(services, options.replayMaxBytes ?? REPLAY_MAX_BYTES)): Koa {
  // maxIpsCount 1: only the hop our own balancer appended is trusted, not what the client wrote before it.
  const app = new Koa({ proxy: options.trustProxy ?? false, maxIpsCount: 1 });
  app.use(assignRequestId());
  const router = new Router();
  app.use(countRequests(services.metrics, 'public', router));
  app.use(logRequests(services.log));
  app.use(renderErrors(services.log));
  // Keys first: a refused query string from a valid key still counts and carries limit
  // headers; outside /v1 (the claim pages included) a valid key only gets its headers.
  app.use(requireKey(services));
  app.use(claimRoutes(services));
  app.use(guardQuery());
  app.use(replayCachedAnswers(services, table));

  healthz.register(router, services);
  financials.register(router, services);
  reference.register(router, services);
  aggregate.register(router, services);
  catalog.register(router, services);
  releases.register(router, services);
  exporter.register(router, services);
  revisions.register(router, services);
  docs.register(router, services);

  app.use(router.routes());
  app.use(unmatched(router));
  return app;
}

/** JSON 405 (with Allow) for a known path and another method; JSON 404 otherwise. */
export function unmatched(router: Router): Middleware {
  return async (ctx) => {
    const methods = new Set(router.match(ctx.path, ctx.method).path.flatMap((layer) => layer.methods));
    if (methods.size > 0) throw new MethodNotAllowedError([...methods]);
    throw new NotFoundError();
  };
}
