import Router from '@koa/router';
import Koa from 'koa';
import { registerClaim } from './claim/routes.ts';
import { ClientGoneError } from './errors/index.ts';
import { registerExplore } from './explore/routes.ts';
import { admitKey } from './http/middleware/api-key.ts';
import { observeRequests } from './http/middleware/observe.ts';
import { checkQuery } from './http/middleware/query-guard.ts';
import { replayOrRecord } from './http/middleware/replay.ts';
import { ReplayTable } from './http/middleware/replay-table.ts';
import { unmatched } from './http/middleware/unmatched.ts';
import { usageRecorder } from './http/middleware/usage-record.ts';
import type { RequestContext, RequestState } from './http/request-state.ts';
import { ROUTES } from './http/routes/index.ts';
import { registerWebhooks } from './http/routes/webhooks.ts';
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
 * request takes the same steps, each a function of its own, in this order: it gets its
 * id, and once answered, whatever the answer, an error becomes the spec's JSON and it
 * is counted and logged (observe.ts); its key is checked and charged to its limits,
 * first, so that a refused query string from a valid key still counts and carries
 * limit headers; its query string is bounded; a repeat is answered from the record of
 * its first answer (replay.ts); then its route, on one router: an API route
 * (src/http/routes/index.ts), the claim pages or the Explore page; a path no route
 * matches is the JSON 404, or 405 for a known path and another method (unmatched.ts).
 */
export function createApp(services: Services, options: AppOptions = {}): Koa<RequestState> {
  // maxIpsCount 1: only the hop our own balancer appended is trusted, not what the client wrote before it.
  const app = new Koa<RequestState>({ proxy: options.trustProxy ?? false, maxIpsCount: 1 });
  const router = new Router<RequestState>();
  for (const route of ROUTES) {
    router.get(route.path, (ctx) => {
      ctx.state.route = route.path;
      return route.handle(ctx, services);
    });
  }
  registerWebhooks(router, services);
  registerClaim(router, services);
  registerExplore(router, services);

  // Errors after the answer started (a streamed export cut short) reach only this:
  // a body the client left, or the server ended idle (export_idle), is routine.
  app.on('error', (err: NodeJS.ErrnoException, ctx?: RequestContext) => {
    const routine =
      err instanceof ClientGoneError || err.code === 'ERR_STREAM_PREMATURE_CLOSE' || err.code === 'ECONNRESET' || err.code === 'EPIPE';
    services.log[routine ? 'debug' : 'error']({ err, reqId: ctx?.state.requestId }, 'response stream ended early');
  });
  const table = new ReplayTable(services.releases, options.replayMaxBytes ?? REPLAY_MAX_BYTES);
  app.use(
    observeRequests({
      metrics: services.metrics,
      listener: 'public',
      router,
      log: services.log,
      record: services.usage.counting ? usageRecorder(services.usage.log, router) : undefined,
    }),
  );
  app.use(async (ctx, next) => {
    await admitKey(ctx, services);
    checkQuery(ctx.querystring);
    await replayOrRecord(ctx, services, table, next);
  });
  app.use(router.routes());
  app.use(unmatched(router));
  return app;
}
