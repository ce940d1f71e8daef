import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

/**
 * The accepted form of a client's own X-Request-Id (docs/api.md "Request ids"):
 * 1–128 characters of letters, digits, `.`, `_`, `:` and `-`, which UUIDs, ULIDs and
 * trace ids fit. Anything else (or a repeated header) is replaced, so what reaches the
 * logs is always one bounded, harmless token.
 */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const newRequestId = (): string => randomUUID();

/** Names the request in `ctx.state.requestId` and in the X-Request-Id response header. */
export function assignRequestId(): Middleware {
  return async (ctx, next) => {
    const given = ctx.get('x-request-id');
    const id = REQUEST_ID.test(given) ? given : newRequestId();
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    await next();
  };
}
