import type { Decision, WindowState } from '../../limits/limiter.ts';
import type { RequestContext } from '../request-state.ts';

/**
 * Spec 8 rule 2's `X-RateLimit-*` for the window with the least remaining (on a tie,
 * the one that comes back later), Reset in delta seconds; and the IETF draft's
 * `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers-10) for
 * every window. `prefix` names the policies of another limiter (the bad-key guard).
 * As flat pairs (name, value, name, value…).
 */
export function limitHeaders(decision: Decision, prefix = ''): string[] {
  // Plain loops: this runs on every answer.
  const { windows } = decision;
  const tightest = tightestWindow(windows);
  let policy = '';
  let state = '';
  for (let i = 0; i < windows.length; i++) {
    const w: WindowState = windows[i]!;
    const name = `${i === 0 ? '' : ', '}"${prefix}${w.name}"`;
    policy += `${name};q=${w.limit};w=${w.windowSeconds}`;
    state += `${name};r=${w.remaining};t=${w.resetSeconds}`;
  }
  return [
    'X-RateLimit-Limit',
    String(tightest.limit),
    'X-RateLimit-Remaining',
    String(tightest.remaining),
    'X-RateLimit-Reset',
    String(tightest.resetSeconds),
    'RateLimit-Policy',
    policy,
    'RateLimit',
    state,
  ];
}

/** The window `X-RateLimit-*` describe: the one with the least remaining; on a tie, the one that comes back later. */
export function tightestWindow(windows: readonly WindowState[]): WindowState {
  let tightest = windows[0]!;
  for (let i = 1; i < windows.length; i++) {
    const w = windows[i]!;
    if (w.remaining < tightest.remaining || (w.remaining === tightest.remaining && w.resetSeconds > tightest.resetSeconds)) tightest = w;
  }
  return tightest;
}

export function setLimitHeaders(ctx: RequestContext, decision: Decision, prefix?: string): void {
  const pairs = limitHeaders(decision, prefix);
  for (let i = 0; i < pairs.length; i += 2) ctx.set(pairs[i]!, pairs[i + 1]!);
}
