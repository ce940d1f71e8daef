import {
  ApiError,
  DuplicateKeyHeaderError,
  InvalidKeyError,
  KeysUnavailableError,
  MissingKeyError,
  TooManyRequestsError,
  UsageLimitError,
} from '../../errors/index.ts';
import { looksLikeKey } from '../../keys/key-format.ts';
import type { KeyRecord } from '../../keys/store.ts';
import type { Services } from '../../services.ts';
import type { RequestContext } from '../request-state.ts';
import { setRequestKey } from '../respond/request-key.ts';
import { setLimitHeaders, tightestWindow } from './limit-headers.ts';

type KeyServices = Pick<Services, 'keys' | 'limits' | 'clock' | 'metrics' | 'notifications' | 'usage'>;

/** As case-insensitive as the router, so /V1/catalog cannot slip past the key check. */
const isV1 = (path: string) => /^\/v1(\/|$)/i.test(path);
/** The usage endpoints, which count against their own guard only (docs/api.md "Usage"). */
const isUsage = (path: string) => /^\/v1\/usage(?:\/daily)?$/i.test(path);

/** The feeds of the publication log, as the router matches them (any case, a trailing slash or not). */
const isFeed = (path: string) => /^\/v1\/releases\.(atom|json)\/?$/i.test(path);

/**
 * The key's record, or the 401 to answer; a key store that cannot answer is a 503
 * (thrown). `key` is the one x-api-key the request sent ('' for none). A key this
 * replica does not hold is looked up in the shared store only for an address the
 * bad-key guard still admits: a refused address costs no lookup.
 */
async function identifyKey(services: KeyServices, key: string, ip: string): Promise<KeyRecord | ApiError> {
  if (!key) return new MissingKeyError();
  // Malformed keys get the unknown key's answer without a lookup.
  if (!looksLikeKey(key)) return new InvalidKeyError();
  try {
    const known = await services.keys.known(key);
    if (known) return known;
    if (!(await services.limits.badKeys.peek(ip)).allowed) return new InvalidKeyError();
    return (await services.keys.verify(key)) ?? new InvalidKeyError();
  } catch {
    throw new KeysUnavailableError();
  }
}

/**
 * Admits a request by its key, or throws the refusal to answer (spec sections 5 and
 * 8). Every path under /v1, matched or not, needs a key, so a 404 or 405 there counts
 * like any other request. A valid key is charged to its own limits; a missing or
 * invalid one to the client address's bad-key guard, which never touches a valid
 * key's requests. Outside /v1 nothing needs a key and nothing is counted, but a
 * request carrying a valid key still gets its limit headers (spec 8.2: every
 * response), read without counting. The feeds hold no values and need no key either,
 * unless FEED_PUBLIC=false.
 */
export async function admitKey(ctx: RequestContext, services: KeyServices): Promise<void> {
  if (!isV1(ctx.path) || (services.notifications.feedsPublic && isFeed(ctx.path))) {
    // Only keys this replica knows: a keyless path must not cost a shared-store lookup per request.
    const key = ctx.get('x-api-key');
    const found = key && looksLikeKey(key) ? await services.keys.known(key) : undefined;
    if (found) setLimitHeaders(ctx, await services.limits.requests.peek(found.id));
    return;
  }
  const key = keyHeader(ctx);
  const found = key instanceof ApiError ? key : await identifyKey(services, key, ctx.ip);
  if (found instanceof ApiError) {
    const guard = await services.limits.badKeys.consume(ctx.ip);
    setLimitHeaders(ctx, guard, 'bad-key-');
    if (guard.allowed) throw found;
    services.metrics.limiterRefusals.inc({ limiter: 'bad_key' });
    throw new TooManyRequestsError(guard.retryAfterSeconds);
  }
  setRequestKey(ctx, found);
  if (isUsage(ctx.path)) return admitUsage(ctx, services, found.id);
  services.keys.recordUse(found.id, services.clock());
  // A refusal charges nothing.
  const decision = await services.limits.requests.consume(found.id);
  setLimitHeaders(ctx, decision);
  if (!decision.allowed) {
    services.metrics.limiterRefusals.inc({ limiter: 'key' });
    ctx.state.refusedWindow = tightestWindow(decision.windows).name;
    throw new TooManyRequestsError(decision.retryAfterSeconds);
  }
}

/**
 * A usage request counts against the key's usage guard alone, so a key its other
 * limits refuse can still ask where it stands; its limit headers are the key's request
 * limits, read without counting, or the guard's on its own 429.
 */
async function admitUsage(ctx: RequestContext, services: KeyServices, id: string): Promise<void> {
  const guard = await services.usage.guard.consume(id);
  if (guard.allowed) return setLimitHeaders(ctx, await services.limits.requests.peek(id));
  setLimitHeaders(ctx, guard, 'usage-');
  services.metrics.limiterRefusals.inc({ limiter: 'usage' });
  throw new UsageLimitError(guard.windows[0]!.limit, guard.retryAfterSeconds);
}

/** The request's one x-api-key ('' when it sent none), or the 401 for a key sent twice: no guessing which one the client meant. */
function keyHeader(ctx: RequestContext): string | ApiError {
  // Node joins a repeated header's values with ", ", which no key contains; only
  // then is the (costlier) per-header list read, to tell a repeat from one odd value.
  const key = ctx.get('x-api-key');
  if (!key.includes(',')) return key;
  const given = ctx.req.headersDistinct['x-api-key'] ?? [];
  if (given.length > 1) return new DuplicateKeyHeaderError();
  return given[0] ?? '';
}
