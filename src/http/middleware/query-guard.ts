import { InvalidParametersError, QueryTooLongError } from '../../errors/index.ts';

/** Refusal thresholds for a query string; docs/api.md states them to clients. */
export const QUERY_LIMITS = { maxBytes: 4096, maxParams: 200 } as const;

const AMPERSAND = 0x26;

/**
 * Refuses an oversized query string from the raw URL, before anything parses it:
 * Koa's parser is quadratic in repeated keys, so a long one would hold the event loop
 * before a handler could refuse it.
 */
export function checkQuery(raw: string, limits = QUERY_LIMITS): void {
  if (raw.length > limits.maxBytes) throw new QueryTooLongError(limits.maxBytes);
  let params = raw.length > 0 ? 1 : 0;
  for (let i = 0; i < raw.length && params <= limits.maxParams; i++) if (raw.charCodeAt(i) === AMPERSAND) params++;
  if (params > limits.maxParams) {
    throw new InvalidParametersError({}, [`Too many query parameters: at most ${limits.maxParams}`]);
  }
}
