import { randomUUID } from 'node:crypto';
import { mayBeKey } from '../../keys/key-format.ts';
import type { RequestContext } from '../request-state.ts';

/**
 * The accepted form of a client's own X-Request-Id (docs/api.md "Request ids"):
 * 1–128 characters of letters, digits, `.`, `_`, `:` and `-`, which UUIDs, ULIDs and
 * trace ids fit. Anything else (or a repeated header) is replaced, so what reaches the
 * logs is always one bounded, harmless token; so is an id that may be an API key (a
 * client that put its key in the wrong header), which would otherwise be logged and
 * echoed back.
 */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const newRequestId = (): string => randomUUID();

/** A request's id: the client's own X-Request-Id when it has the accepted form, else a new one. */
export const requestIdFor = (given: string | undefined): string =>
  given !== undefined && REQUEST_ID.test(given) && !mayBeKey(given) ? given : newRequestId();

/** Names the request in `ctx.state.requestId` and in the X-Request-Id response header. */
export function nameRequest(ctx: RequestContext): void {
  const id = requestIdFor(ctx.get('x-request-id'));
  ctx.state.requestId = id;
  ctx.set('X-Request-Id', id);
}
