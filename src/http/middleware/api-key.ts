import type { Context, Middleware } from 'koa';
import { ApiError, DuplicateKeyHeaderError, InvalidKeyError, KeysUnavailableError, MissingKeyError, TooManyRequestsError } from '../../errors.ts';
import { looksLikeKey } from '../../keys/key-format.ts';
import type { KeyRecord } from '../../keys/store.ts';
import type { Services } from '../../services.ts';
import { setLimitHeaders } from './limit-headers.ts';

/** As case-insensitive as the router, so /V1/catalog cannot slip past the key check. */
const isV1 = (path: string) => /^\/v1(\/|$)/i.test(path);

/**
 * Spec sections 5 and 8 for every path under /v1, matched or not, so a 404 or 405
 * there needs a key and counts like any other request. A valid key is charged to
 * its own limits; a missing or invalid one to the client address's bad-key guard,
 * which never touches a valid key's requests. Outside /v1 nothing needs a key and
 * nothing is counted, but a request carrying a valid key still gets its limit
 * headers (spec 8.2: every response), read without counting.
 */
export function requireKey(services: Pick<Services, 'keys' | 'limits' | 'clock' | 'metrics'>): Middleware {
  return async (ctx, next) => {
    if (!isV1(ctx.path)) {
      // Only keys this replica holds: a keyless path must not cost a shared-store lookup per request.
      const key = ctx.get('x-api-key');
      const found = key && looksLikeKey(key) ? await services.keys.verify(key, { cachedOnly: true }).catch(() => undefined) : undefined;
      if (found) setLimitHeaders(ctx, await services.limits.requests.peek(found.id));
      return next();
    }
    const found = await identify(ctx, services);
    if (found instanceof ApiError) {
      const guard = await services.limits.badKeys.consume(ctx.ip);
      setLimitHeaders(ctx, guard, 'bad-key-');
      if (guard.allowed) throw found;
      services.metrics.limiterRefusals.inc({ limiter: 'bad_key' });
      throw new TooManyRequestsError(guard.retryAfterSeconds);
    }
    ctx.state.key = found;
    services.keys.recordUse(found.id, services.clock());
    const decision = await services.limits.requests.consume(found.id);
    setLimitHeaders(ctx, decision);
    if (!decision.allowed) {
      services.metrics.limiterRefusals.inc({ limiter: 'key' });
      throw new TooManyRequestsError(decision.retryAfterSeconds);
    }
    await next();
  };
}

/**
 * The key's record, or the 401 to answer; a key store that cannot answer is a 503.
 * A key this replica does not hold is looked up in the shared store only for an
 * address the bad-key guard still admits: a refused address costs no lookup.
 */
async function identify(ctx: Context, { keys, limits }: Pick<Services, 'keys' | 'limits'>): Promise<KeyRecord | ApiError> {
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
  try {
    const held = await keys.verify(key, { cachedOnly: true });
    if (held) return held;
    if (!(await limits.badKeys.peek(ctx.ip)).allowed) return new InvalidKeyError();
    return (await keys.verify(key)) ?? new InvalidKeyError();
  } catch {
    throw new KeysUnavailableError();
  }
}
