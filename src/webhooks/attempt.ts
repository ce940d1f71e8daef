import { request } from 'undici';
import { type AddressPolicy, BlockedError } from './address-policy.ts';
import { signedHeaders } from './signing.ts';

/** Longest one attempt may take, from connecting to the answer's end. */
export const ATTEMPT_TIMEOUT_MS = 15_000;

export interface AttemptResult {
  /** null when no answer came (refused, unreachable, timed out). */
  readonly status_code: number | null;
  readonly duration_ms: number;
  /** Why it failed, or null for a 2xx. */
  readonly error: string | null;
  /** A Retry-After the receiver sent with a failure, in ms. */
  readonly retry_after_ms?: number;
}

export interface Message {
  readonly id: string;
  readonly body: string;
}

/**
 * One signed POST of `message` to `url`. A 2xx succeeds; a redirect is a failure (it is
 * never followed: it could lead anywhere, a private address included); so are any other
 * status, no answer within ATTEMPT_TIMEOUT_MS and a refused address.
 */
export async function attempt(
  policy: AddressPolicy,
  url: string,
  secrets: readonly string[],
  message: Message,
  clock: () => number,
): Promise<AttemptResult> {
  const started = clock();
  const took = () => Math.max(0, Math.round(clock() - started));
  const target = new URL(url);
  const { agent, refused } = policy.dispatcherFor(target);
  if (refused) return { status_code: null, duration_ms: 0, error: `blocked_address: ${refused}` };
  try {
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'data-query-service-webhooks',
      ...signedHeaders(secrets, message.id, Math.floor(clock() / 1000), message.body),
    };
    const res = await request(target, {
      method: 'POST',
      headers,
      body: message.body,
      dispatcher: agent,
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    });
    const text = await res.body.text();
    const status = res.statusCode;
    if (status >= 200 && status < 300) return { status_code: status, duration_ms: took(), error: null };
    const location = res.headers.location;
    const error =
      status >= 300 && status < 400
        ? `answered ${status}, a redirect${location ? ` to ${location}` : ''}, which is not followed`
        : `answered ${status}${text ? `: ${text.slice(0, 200)}` : ''}`;
    return { status_code: status, duration_ms: took(), error, retry_after_ms: retryAfterMs(res.headers['retry-after'], clock()) };
  } catch (err) {
    const cause = (err as Error & { cause?: Error }).cause ?? (err as Error);
    const why =
      cause instanceof BlockedError
        ? `blocked_address: ${cause.message}`
        : (err as Error).name === 'TimeoutError'
          ? `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`
          : cause.message;
    return { status_code: null, duration_ms: took(), error: why };
  } finally {
    void agent.close();
  }
}

/** Retry-After in seconds or as an HTTP date, in ms from `now`. */
function retryAfterMs(header: string | string[] | undefined, now: number): number | undefined {
  const text = Array.isArray(header) ? header[0] : header;
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
