import { timingSafeEqual } from 'node:crypto';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import type { Logger } from 'pino';
import * as v from 'valibot';
import type { Clock } from '../clock.ts';
import { AdminUnauthorizedError, InvalidParametersError, NotFoundError, ReleaseLoadError, StoreUnavailableError } from '../errors/index.ts';
import { observeRequests } from '../http/middleware/observe.ts';
import { unmatched } from '../http/middleware/unmatched.ts';
import type { RequestState } from '../http/request-state.ts';
import type { InviteStore } from '../invites/store.ts';
import type { KeyRecord, KeyStore } from '../keys/store.ts';
import type { Metrics } from '../metrics.ts';
import { invalidParameters } from '../query/options/params.ts';
import { RedisUnavailableError } from '../state/redis-unavailable.ts';
import type { UsageLog } from '../usage/usage-log.ts';
import type { WebhookStore } from '../webhooks/store.ts';
import * as invites from './invites.ts';
import * as usage from './usage.ts';
import * as webhooks from './webhooks.ts';

// The operators' surface: bound to 127.0.0.1 only and authenticated by the token in
// STATE_DIR/admin-token, which only the account running the service can read.

const createKeyBody = v.object({
  client: v.pipe(v.string(), v.trim(), v.minLength(1, 'Name the client the key is for'), v.maxLength(200)),
});

const revokeKeyBody = v.object({
  ref: v.pipe(v.string(), v.trim(), v.minLength(1, 'Give the key id (key_…) or the full key')),
});

const KEY_ID = /^key_[0-9a-f]{16}$/;

async function revoke(keys: KeyStore, ref: string): Promise<KeyRecord> {
  const record = await keys.revoke(ref);
  // Never echo the ref: it may be a full key.
  if (!record) throw new NotFoundError('No key matches that id or key');
  return record;
}

/** Never the hash: an operator only needs what tells keys apart. */
const publicRecord = ({ hash: _hash, ...rest }: KeyRecord) => rest;

/** What the admin listener may do with releases. */
export interface ReleaseControl {
  reload(): Promise<{ serving: string; changed: boolean }>;
  retained(): string[];
}

export function createAdminApp(options: {
  keys: KeyStore;
  invites: InviteStore;
  webhooks: WebhookStore;
  releases: ReleaseControl;
  publicUrl: string;
  clock: Clock;
  token: string;
  log: Logger;
  metrics: Metrics;
  usage: UsageLog;
}): Koa<RequestState> {
  const expected = Buffer.from(`Bearer ${options.token}`);
  const app = new Koa<RequestState>();
  const router = new Router<RequestState>();
  app.use(observeRequests({ metrics: options.metrics, listener: 'admin', router, log: options.log.child({ listener: 'admin' }) }));
  // Before the token check: a Prometheus scraper cannot be given the token file, and
  // the listener is bound to 127.0.0.1. Nothing in the metrics names a key or a client.
  app.use(async (ctx, next) => {
    if (ctx.path !== '/metrics' || ctx.method !== 'GET') return next();
    ctx.state.route = '/metrics';
    ctx.type = options.metrics.contentType;
    ctx.body = await options.metrics.text();
  });
  app.use(async (ctx, next) => {
    const given = Buffer.from(ctx.get('authorization'));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new AdminUnauthorizedError();
    await next();
  });
  // Keys and invites live in Redis with REDIS_URL: when it does not answer, say so.
  app.use(async (_ctx, next) => {
    try {
      await next();
    } catch (err) {
      throw err instanceof RedisUnavailableError ? new StoreUnavailableError() : err;
    }
  });
  app.use(
    bodyParser({
      enableTypes: ['json'],
      jsonLimit: '16kb',
      onError: () => {
        throw new InvalidParametersError({}, ['Expected a JSON body']);
      },
    }),
  );

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
  // A full key travels only in the body: a URL path reaches request logs and proxies.
  router.post('/keys/revoke', async (ctx) => {
    const parsed = v.safeParse(revokeKeyBody, ctx.request.body ?? {});
    if (!parsed.success) throw invalidParameters(parsed.issues);
    ctx.body = { record: publicRecord(await revoke(options.keys, parsed.output.ref)) };
  });
  router.post('/keys/:id/revoke', async (ctx) => {
    if (!KEY_ID.test(ctx.params.id!)) throw new NotFoundError('No key matches; send a full key as {"ref": …} to POST /keys/revoke');
    ctx.body = { record: publicRecord(await revoke(options.keys, ctx.params.id!)) };
  });
  invites.register(router, options);
  webhooks.register(router, options);
  usage.register(router, options);
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
