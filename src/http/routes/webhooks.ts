import { bodyParser } from '@koa/bodyparser';
import type Router from '@koa/router';
import * as v from 'valibot';
import { InvalidParametersError, NotFoundError, WebhooksUnavailableError } from '../../errors/index.ts';
import { invalidParameters } from '../../query/options/params.ts';
import type { Services } from '../../services.ts';
import { RedisUnavailableError } from '../../state/redis-unavailable.ts';
import { seqOf } from '../../webhooks/delivery.ts';
import { endpointView } from '../../webhooks/manage.ts';
import { createBody, patchBody } from '../../webhooks/request-bodies.ts';
import type { RequestContext, RequestState } from '../request-state.ts';
import { requestKey } from '../respond/request-key.ts';

// /v1/webhooks: each API key's endpoints, their tests, secrets and delivery logs
// (docs/api.md "Webhooks"). The key check has run before any of these.

const pageQuery = v.strictObject({
  limit: v.optional(
    v.pipe(v.string(), v.regex(/^\d{1,3}$/, 'Expected 1 to 100'), v.transform(Number), v.minValue(1), v.maxValue(100)),
    '50',
  ),
  cursor: v.optional(v.pipe(v.string(), v.regex(/^\d{1,6}$/, 'Expected the cursor of the page before'), v.transform(Number))),
});

const parseJson = bodyParser({
  enableTypes: ['json'],
  jsonLimit: '4kb',
  onError: () => {
    throw new InvalidParametersError({}, ['Expected a JSON body']);
  },
});

function parsed<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input ?? {});
  if (!result.success) throw invalidParameters(result.issues);
  return result.output;
}

export function registerWebhooks(router: Router<RequestState>, services: Services): void {
  const { webhooks, clock } = services;
  const route = (pattern: string, handle: (ctx: RequestContext) => Promise<void>) => async (ctx: RequestContext) => {
    ctx.state.route = pattern;
    ctx.set('Cache-Control', 'no-store');
    // A store that did not answer changed nothing: a 503 to retry, not a 500.
    await handle(ctx).catch((err: unknown) => {
      throw err instanceof RedisUnavailableError ? new WebhooksUnavailableError() : err;
    });
  };
  const own = (ctx: RequestContext) => webhooks.own(requestKey(ctx).id, ctx.params.id!);

  router.post(
    '/v1/webhooks',
    parseJson,
    route('/v1/webhooks', async (ctx) => {
      const body = parsed(createBody, ctx.request.body);
      const { endpoint, secret } = await webhooks.create(requestKey(ctx).id, body.url, body.events);
      ctx.status = 201;
      ctx.set('Location', `/v1/webhooks/${endpoint.id}`);
      ctx.body = { ...endpointView(endpoint), secret };
    }),
  );
  router.get(
    '/v1/webhooks',
    route('/v1/webhooks', async (ctx) => {
      ctx.body = { webhooks: (await webhooks.store.list(requestKey(ctx).id)).map(endpointView) };
    }),
  );
  router.get(
    '/v1/webhooks/:id',
    route('/v1/webhooks/{id}', async (ctx) => {
      ctx.body = endpointView(await own(ctx));
    }),
  );
  router.patch(
    '/v1/webhooks/:id',
    parseJson,
    route('/v1/webhooks/{id}', async (ctx) => {
      const change = parsed(patchBody, ctx.request.body);
      ctx.body = endpointView(await webhooks.update(await own(ctx), change));
    }),
  );
  router.delete(
    '/v1/webhooks/:id',
    route('/v1/webhooks/{id}', async (ctx) => {
      await webhooks.store.remove((await own(ctx)).id);
      ctx.status = 204;
    }),
  );
  router.post(
    '/v1/webhooks/:id/test',
    route('/v1/webhooks/{id}/test', async (ctx) => {
      const { retry_after_ms: _, ...result } = await webhooks.sendTest(await own(ctx));
      ctx.body = result;
    }),
  );
  router.post(
    '/v1/webhooks/:id/rotate-secret',
    route('/v1/webhooks/{id}/rotate-secret', async (ctx) => {
      ctx.body = await webhooks.rotate(await own(ctx));
    }),
  );
  router.get(
    '/v1/webhooks/:id/deliveries',
    route('/v1/webhooks/{id}/deliveries', async (ctx) => {
      const { limit, cursor = 0 } = parsed(pageQuery, ctx.query);
      const all = await webhooks.store.deliveries((await own(ctx)).id, clock());
      const next = cursor + limit < all.length ? String(cursor + limit) : null;
      ctx.body = { deliveries: all.slice(cursor, cursor + limit), pagination: { cursor: next } };
    }),
  );
  router.post(
    '/v1/webhooks/:id/deliveries/:msg_id/redeliver',
    route('/v1/webhooks/{id}/deliveries/{msg_id}/redeliver', async (ctx) => {
      const endpoint = await own(ctx);
      const msgId = ctx.params.msg_id!;
      const seq = seqOf(msgId);
      const log = await webhooks.store.deliveries(endpoint.id, clock());
      const sent = log.filter((d) => d.msg_id === msgId);
      const body = seq === undefined || sent.length === 0 ? undefined : await webhooks.delivery.body(seq);
      if (body === undefined) throw new NotFoundError(`No message ${msgId} in the last 35 days of webhook ${endpoint.id}'s deliveries`);
      const attempt = Math.max(...sent.map((d) => d.attempt)) + 1;
      const { retry_after_ms: _, ...result } = await webhooks.delivery.sendNow(endpoint, { id: msgId, body }, attempt);
      ctx.body = { msg_id: msgId, attempt, ...result };
    }),
  );
}
