import type { RequestContext } from '../request-state.ts';

/**
 * `X-Warnings` on a CSV or Arrow answer: the body has no `meta.warnings`, so a filter
 * value the release does not hold (and the value meant, when near) reaches pandas, R and
 * the query CLI as a header instead: a JSON array of the same lines. Header values are
 * Latin-1: any other character is written as a JSON `\uXXXX` escape, which JSON.parse reads back.
 */
export function setWarningsHeader(ctx: RequestContext, format: string, unmatched: () => readonly string[]): void {
  if (format === 'json') return;
  const warnings = unmatched();
  if (warnings.length === 0) return;
  const ascii = JSON.stringify(warnings).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  ctx.set('X-Warnings', ascii);
}
