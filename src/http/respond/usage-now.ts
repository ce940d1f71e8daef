import type { KeyRecord } from '../../keys/store.ts';
import type { Decision, WindowState } from '../../limits/limiter.ts';
import type { Services } from '../../services.ts';
import { tightestWindow } from '../middleware/limit-headers.ts';

/** One limit that can refuse the key, as GET /v1/usage lists it. */
export interface LimitNow {
  readonly limit: number;
  /** Null when the shared store did not answer (see `limiter`). */
  readonly used: number | null;
  readonly remaining: number | null;
  /** Whole seconds until a unit comes back, like X-RateLimit-Reset; null for a limit on work at once, which comes back when the work ends. */
  readonly reset: number | null;
  readonly reset_at: string | null;
  /** The window's length in seconds; null for a limit on work at once. */
  readonly window: number | null;
}

type UsageServices = Pick<Services, 'limits' | 'usage' | 'exports' | 'admission' | 'keys' | 'clock'>;

const at = (now: number, seconds: number) => new Date(now + seconds * 1000).toISOString();

/** A limiter's window; its figures are unknown while its shared store does not answer. */
function windowNow(decision: Decision, name: WindowState['name'], now: number): LimitNow {
  const w = decision.windows.find((window) => window.name === name)!;
  if (decision.unavailable) return { limit: w.limit, used: null, remaining: null, reset: null, reset_at: null, window: w.windowSeconds };
  return {
    limit: w.limit,
    used: w.limit - w.remaining,
    remaining: w.remaining,
    reset: w.resetSeconds,
    reset_at: at(now, w.resetSeconds),
    window: w.windowSeconds,
  };
}

/** A limit on work at once (this replica's: these are enforced per process). */
const atOnce = (limit: number, used: number): LimitNow => ({
  limit,
  used,
  remaining: Math.max(0, limit - used),
  reset: null,
  reset_at: null,
  window: null,
});

/** When the key last made a data request, as the key store has it; null when it cannot say now. */
async function lastUsedAt(keys: Services['keys'], id: string): Promise<string | null> {
  const records = await keys.list().catch(() => []);
  return records.find((r) => r.id === id)?.last_used_at ?? null;
}

/**
 * Where `key` stands now (GET /v1/usage), read from each limiter's own state without
 * counting anything: Redis's where REDIS_URL is set, so replicas agree; the limits on
 * work at once are this process's. Returns the request limiter's decision too, for the
 * answer's limit headers.
 */
export async function usageNow(services: UsageServices, key: KeyRecord): Promise<{ body: object; requests: Decision }> {
  const { id } = key;
  const { limits, usage, exports, admission } = services;
  const [requests, exported, heavy, lastUsed, lastRefused] = await Promise.all([
    limits.requests.peek(id),
    limits.exports.peek(id),
    limits.heavy.read(id),
    lastUsedAt(services.keys, id),
    usage.log.lastRefused(id),
  ]);
  const now = services.clock();
  const unavailable = requests.unavailable || exported.unavailable || heavy.unavailable;
  const body = {
    key: { id, client: key.client, created_at: key.created_at, last_used_at: lastUsed },
    as_of: new Date(now).toISOString(),
    limiter: unavailable ? 'unavailable' : usage.backend,
    binding: tightestWindow(requests.windows).name,
    limits: {
      minute: windowNow(requests, 'minute', now),
      day: windowNow(requests, 'day', now),
      exports_day: windowNow(exported, 'day', now),
      exports_open: atOnce(exports.open.perKey, exports.open.openFor(id)),
      heavy_seconds_minute: {
        limit: limits.heavy.perMinuteMs / 1000,
        used: heavy.usedMs / 1000,
        remaining: heavy.remainingMs / 1000,
        reset: heavy.resetSeconds,
        reset_at: at(now, heavy.resetSeconds),
        window: 60,
      },
      heavy_running: atOnce(admission.perKey, admission.runningFor(id)),
    } satisfies Record<string, LimitNow>,
    last_refused: lastRefused,
  };
  return { body, requests };
}
