import type { Decision, WindowState } from '../limits/limiter.ts';

/**
 * Spec 8 rule 2's `X-RateLimit-*` for the window with the least remaining (on a tie,
 * the one that comes back later), Reset in delta seconds; and the IETF draft's
 * `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers-10) for
 * every window. `prefix` names the policies of another limiter (the bad-key guard).
 */
export function limitHeaders(decision: Decision, prefix = ''): Record<string, string> {
  const tightest = decision.windows.reduce((a, b) =>
    b.remaining < a.remaining || (b.remaining === a.remaining && b.resetSeconds > a.resetSeconds) ? b : a,
  );
  const name = (w: WindowState) => `"${prefix}${w.name}"`;
  return {
    'X-RateLimit-Limit': String(tightest.limit),
    'X-RateLimit-Remaining': String(tightest.remaining),
    'X-RateLimit-Reset': String(tightest.resetSeconds),
    'RateLimit-Policy': decision.windows.map((w) => `${name(w)};q=${w.limit};w=${w.windowSeconds}`).join(', '),
    RateLimit: decision.windows.map((w) => `${name(w)};r=${w.remaining};t=${w.resetSeconds}`).join(', '),
  };
}
