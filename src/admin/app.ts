import { timingSafeEqual } from 'node:crypto';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import type { Logger } from 'pino';
import * as v from 'valibot';
import { unmatched } from '../app.ts';
import { AdminUnauthorizedError, InvalidParametersError, NotFoundError } from '../errors.ts';
import { renderErrors } from '../http/errors.ts';
import { invalidParameters } from '../http/params.ts';
import { logRequests } from '../http/request-log.ts';
import type { KeyRecord, KeyStore } from '../keys/store.ts';
import { assignRequestId } from '../http/request-id.ts';
import { countRequests } from '../http/request-metrics.ts';
import type { Metrics } from '../metrics.ts';

// The operators' surface: bound to 127.0.0.1 only and authenticated by the token in
// STATE_DIR/admin-token, which only the account running the service can read.

const createKeyBody = v.object({
  client: v.pipe(v.string(), v.trim(), v.minLength(1, 'Name the client the key is for'), v.maxLength(200)),
});

/** Never the hash: an operator only needs what tells keys apart. */
const publicRecord = ({ hash: _hash, ...rest }: KeyRecord) => rest;

export function createAdminApp(options: { keys: KeyStore; token: string; log: Logger; metrics: Metrics }): Koa {
  const expected = Buffer.from(`Bearer ${options.token}`);
  const app = new Koa();
  app.use(assignRequestId());
  const router = new Router();
  app.use(countRequests(options.metrics, 'admin', router));
  app.use(logRequests(options.log.child({ listener: 'admin' })));
  app.use(renderErrors(options.log));
  // Before the token check: a Prometheus scraper cannot be given the token file, and
  // the listener is bound to 127.0.0.1. Nothing in the metrics names a key or a client.
  app.use(async (ctx, next) => {
    if (ctx.path !== '/metrics' || ctx.method !== 'GET') return next();
    ctx._matchedRoute = '/metrics';
    ctx.type = options.metrics.contentType;
    ctx.body = await options.metrics.text();
  });
  app.use(async (ctx, next) => {
    const given = Buffer.from(ctx.get('authorization'));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new AdminUnauthorizedError();
    await next();
  });
  app.use(bodyParser({ enableTypes: ['json'], jsonLimit: '16kb', onError: () => { throw new InvalidParametersError({}, ['Expected a JSON body']); } }));

  router.get('/keys', async (ctx) => {
    ctx.body = { keys: (await options.keys.list()).map(publicRecord) };
  });
  router.post('/keys', async (ctx) => {
    const parsed = v.safeParse(createKeyBody, ctx.request.body ?? {});
    if (!parsed.success) throw invalidParameters(parsed.issues);
    const { key, record } = await options.keys.create(parsed.output.client);
    ctx.status = 201;
    ctx.body = { key, record: publicRecord(record) };
  });
  router.post('/keys/:ref/revoke', async (ctx) => {
    const record = await options.keys.revoke(ctx.params.ref!);
    if (!record) throw new NotFoundError(`No key matches '${ctx.params.ref}'`);
    ctx.body = { record: publicRecord(record) };
  });
  app.use(router.routes());
  app.use(unmatched(router));
  return app;
}
