import { timingSafeEqual } from 'node:crypto';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import type { Logger } from 'pino';
import * as v from 'valibot';
import { unmatched } from '../app.ts';
import { AdminUnauthorizedError, InvalidParametersError, NotFoundError, ReleaseLoadError } from '../errors.ts';
import { renderErrors } from '../http/errors.ts';
import { invalidParameters } from '../http/params.ts';
import { logRequests } from '../http/request-log.ts';
import type { KeyRecord, KeyStore } from '../keys/store.ts';

// The operators' surface: bound to 127.0.0.1 only and authenticated by the token in
// STATE_DIR/admin-token, which only the account running the service can read.

const createKeyBody = v.object({
  client: v.pipe(v.string(), v.trim(), v.minLength(1, 'Name the client the key is for'), v.maxLength(200)),
});

/** Never the hash: an operator only needs what tells keys apart. */
const publicRecord = ({ hash: _hash, ...rest }: KeyRecord) => rest;

/** What the admin listener may do with releases. */
export interface ReleaseControl {
  reload(): Promise<{ serving: string; changed: boolean }>;
  retained(): string[];
}

export function createAdminApp(options: { keys: KeyStore; token: string; log: Logger; releases: ReleaseControl }): Koa {
  const expected = Buffer.from(`Bearer ${options.token}`);
  const app = new Koa();
  app.use(logRequests(options.log.child({ listener: 'admin' })));
  app.use(renderErrors(options.log));
  app.use(async (ctx, next) => {
    const given = Buffer.from(ctx.get('authorization'));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new AdminUnauthorizedError();
    await next();
  });
  app.use(bodyParser({ enableTypes: ['json'], jsonLimit: '16kb', onError: () => { throw new InvalidParametersError({}, ['Expected a JSON body']); } }));

  const router = new Router();
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
  // Loads what DATA_DIR's pointer names now; a release that cannot be loaded leaves
  // the served one serving and says why.
  router.post('/releases/reload', async (ctx) => {
    try {
      ctx.body = { ...(await options.releases.reload()), retained: options.releases.retained() };
    } catch (err) {
      throw new ReleaseLoadError((err as Error).message);
    }
  });
  app.use(router.routes());
  app.use(unmatched(router));
  return app;
}
