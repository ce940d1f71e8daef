import type http from 'node:http';
import Router from '@koa/router';
import Koa from 'koa';
import { claimRoutes } from './claim/routes.ts';
import { answerRepeatsBelowKoa } from './http/below-koa.ts';
import { publicPipeline } from './http/middleware/pipeline.ts';
import { ReplayTable } from './http/middleware/replay-table.ts';
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
 * The public listener's request handler: repeats with a recorded answer are answered
 * below Koa (src/http/below-koa.ts) unless `belowKoa` is false, everything else by the app.
 */
export function createPublicHandler(services: Services, options: AppOptions & { readonly belowKoa?: boolean } = {}): http.RequestListener {
  const table = new ReplayTable(services.releases, options.replayMaxBytes ?? REPLAY_MAX_BYTES);
  const app = createApp(services, options, table).callback();
  return options.belowKoa === false ? app : answerRepeatsBelowKoa(services, table, app);
}

/**
 * The public API as a Koa app; it never listens (callers, tests included, do). Every
 * request takes one path (src/http/middleware/pipeline.ts), then the claim pages, then
 * its route (src/http/routes/index.ts).
 */
export function createApp(
  services: Services,
  options: AppOptions = {},
  table = new ReplayTable(services.releases, options.replayMaxBytes ?? REPLAY_MAX_BYTES),
): Koa {
  // maxIpsCount 1: only the hop our own balancer appended is trusted, not what the client wrote before it.
  const app = new Koa({ proxy: options.trustProxy ?? false, maxIpsCount: 1 });
  const router = new Router();
  for (const route of ROUTES) router.get(route.path, (ctx) => route.handle(ctx, services));

  // Errors after the answer started (a streamed export cut short) reach only this:
  // a body the client left, or the server ended idle (export_idle), is routine.
  app.on('error', (err: NodeJS.ErrnoException, ctx?: Koa.Context) => {
    const routine = err.code === 'ERR_STREAM_PREMATURE_CLOSE' || err.code === 'ECONNRESET' || err.code === 'EPIPE';
    services.log[routine ? 'debug' : 'error']({ err, reqId: ctx?.state.requestId }, 'response stream ended early');
  });
  app.use(publicPipeline(services, table, router));
  app.use(claimRoutes(services));
  app.use(router.routes());
  app.use(unmatched(router));
  return app;
}
