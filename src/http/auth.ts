import type { Context, Middleware } from 'koa';
import { ApiError, DuplicateKeyHeaderError, InvalidKeyError, KeysUnavailableError, MissingKeyError, TooManyRequestsError } from '../errors.ts';
import { looksLikeKey } from '../keys/key-format.ts';
import type { KeyRecord } from '../keys/store.ts';
import type { Services } from '../services.ts';
import { limitHeaders } from './limit-headers.ts';

/** As case-insensitive as the router, so /V1/catalog cannot slip past the key check. */
const isV1 = (path: string) => /^\/v1(\/|$)/i.test(path);

/**
 * Spec sections 5 and 8 for every path under /v1, matched or not, so a 404 or 405
 * there needs a key and counts like any other request. A valid key is charged to
 * its own limits; a missing or invalid one to the client address's bad-key guard,
 * which never touches a valid key's requests.
 */
export function requireKey(services: Pick<Services, 'keys' | 'limits' | 'badKeys' | 'clock' | 'metrics'>): Middleware {
  return async (ctx, next) => {
    if (!isV1(ctx.path)) return next();
    const found = await identify(ctx, services);
    if (found instanceof ApiError) {
      const guard = await services.badKeys.consume(ctx.ip);
      ctx.set(limitHeaders(guard, 'bad-key-'));
      if (guard.allowed) throw found;
      services.metrics.limiterRefusals.inc({ limiter: 'bad_key' });
      throw new TooManyRequestsError(guard.retryAfterSeconds);
    }
    ctx.state.key = found;
    services.keys.recordUse(found.id, services.clock());
    const decision = await services.limits.consume(found.id);
    ctx.set(limitHeaders(decision));
    if (!decision.allowed) {
      services.metrics.limiterRefusals.inc({ limiter: 'key' });
      throw new TooManyRequestsError(decision.retryAfterSeconds);
    }
    await next();
  };
}

/** The key's record, or the 401 to answer; a key store that cannot answer is a 503. */
async function identify(ctx: Context, { keys }: Pick<Services, 'keys'>): Promise<KeyRecord | ApiError> {
  // Node joins a repeated header's values with ", ", which no key contains; only
  // then is the (costlier) per-header list read, to tell a repeat from one odd value.
  let key = ctx.get('x-api-key');
  if (key.includes(',')) {
    const given = ctx.req.headersDistinct['x-api-key'] ?? [];
    if (given.length > 1) return new DuplicateKeyHeaderError();
    key = given[0] ?? '';
  }
  if (!key) return new MissingKeyError();
  // Malformed keys get the unknown key's answer without a lookup.
  if (!looksLikeKey(key)) return new InvalidKeyError();
  let record: KeyRecord | undefined;
  try {
    record = await keys.verify(key);
  } catch {
    throw new KeysUnavailableError();
  }
  return record ?? new InvalidKeyError();
}
