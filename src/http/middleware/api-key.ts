import type { Context } from 'koa';
import {
  ApiError,
  DuplicateKeyHeaderError,
  InvalidKeyError,
  KeysUnavailableError,
  MissingKeyError,
  TooManyRequestsError,
} from '../../errors.ts';
import { looksLikeKey } from '../../keys/key-format.ts';
import type { KeyRecord } from '../../keys/store.ts';
import { type Decision, decidesHere } from '../../limits/limiter.ts';
import type { Services } from '../../services.ts';
import { setRequestKey } from '../respond/request-key.ts';
import { setLimitHeaders } from './limit-headers.ts';

type KeyServices = Pick<Services, 'keys' | 'limits' | 'clock' | 'metrics'>;

/** As case-insensitive as the router, so /V1/catalog cannot slip past the key check. */
export const isV1 = (path: string) => /^\/v1(\/|$)/i.test(path);

/**
 * The key's record, or the 401 to answer; a key store that cannot answer is a 503
 * (thrown). `key` is the one x-api-key the request sent ('' for none). A key this
 * replica does not hold is looked up in the shared store only for an address the
 * bad-key guard still admits: a refused address costs no lookup.
 */
export async function identifyKey(services: KeyServices, key: string, ip: string): Promise<KeyRecord | ApiError> {
  if (!key) return new MissingKeyError();
  // Malformed keys get the unknown key's answer without a lookup.
  if (!looksLikeKey(key)) return new InvalidKeyError();
  try {
    const held = services.keys.held(key);
    if (held) return held;
    if (!(await services.limits.badKeys.peek(ip)).allowed) return new InvalidKeyError();
    return (await services.keys.verify(key)) ?? new InvalidKeyError();
  } catch {
    throw new KeysUnavailableError();
  }
}

/** Charges a request with a valid key to the key's limits, noting its use. A refusal charges nothing. */
export async function chargeKey(services: KeyServices, record: KeyRecord): Promise<Decision> {
  services.keys.recordUse(record.id, services.clock());
  return services.limits.requests.consume(record.id);
}

/** chargeKey without a promise turn, when the key's limiter decides in this process; undefined (nothing charged) when it must ask a shared one. */
export function chargeKeyHere(services: KeyServices, record: KeyRecord): Decision | undefined {
  const limiter = services.limits.requests;
  if (!decidesHere(limiter)) return undefined;
  services.keys.recordUse(record.id, services.clock());
  return limiter.consumeHere(record.id);
}

/**
 * Admits a request by its key, or throws the refusal to answer (spec sections 5 and
 * 8). Every path under /v1, matched or not, needs a key, so a 404 or 405 there counts
 * like any other request. A valid key is charged to its own limits; a missing or
 * invalid one to the client address's bad-key guard, which never touches a valid
 * key's requests. Outside /v1 nothing needs a key and nothing is counted, but a
 * request carrying a valid key still gets its limit headers (spec 8.2: every
 * response), read without counting.
 */
export async function admitKey(ctx: Context, services: KeyServices): Promise<void> {
  if (!isV1(ctx.path)) {
    // Only keys this replica holds: a keyless path must not cost a shared-store lookup per request.
    const key = ctx.get('x-api-key');
    const found = key && looksLikeKey(key) ? services.keys.held(key) : undefined;
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
  const decision = await chargeKey(services, found);
  setLimitHeaders(ctx, decision);
  if (!decision.allowed) {
    services.metrics.limiterRefusals.inc({ limiter: 'key' });
    throw new TooManyRequestsError(decision.retryAfterSeconds);
  }
}

/** The request's one x-api-key ('' when it sent none), or the 401 for a key sent twice: no guessing which one the client meant. */
function keyHeader(ctx: Context): string | ApiError {
  // Node joins a repeated header's values with ", ", which no key contains; only
  // then is the (costlier) per-header list read, to tell a repeat from one odd value.
  const key = ctx.get('x-api-key');
  if (!key.includes(',')) return key;
  const given = ctx.req.headersDistinct['x-api-key'] ?? [];
  if (given.length > 1) return new DuplicateKeyHeaderError();
  return given[0] ?? '';
}
