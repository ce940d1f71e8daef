import type { ParameterizedContext } from 'koa';
import type { KeyRecord } from '../keys/store.ts';
import type { CacheableAnswer } from './respond/cacheable.ts';

/**
 * What one request carries from step to step (`ctx.state`), on either listener: each
 * field is written by one step and read by those after it.
 */
export interface RequestState {
  /** X-Request-Id; named by the first step of every request (middleware/request-id.ts), so every later one reads it. */
  requestId: string;
  /** The route pattern that answered, for the request metrics' label: set by the route, or by a replayed answer. */
  route?: string;
  /** The key a /v1 request was admitted with (respond/request-key.ts). */
  key?: KeyRecord;
  /** The request window of the key's rate limit that refused it (middleware/api-key.ts), for its usage (GET /v1/usage/daily). */
  refusedWindow?: 'minute' | 'day';
  /** The error catalog's code of an error answer, for the log line and the metrics. */
  errorCode?: string;
  /** A cacheable 200 answered (respond/cacheable.ts), which the replay table records. */
  cacheable?: CacheableAnswer;
  /** What runs once the response has closed (respond/response-closed.ts). */
  onResponseClosed?: Array<(finished: boolean) => void>;
  /** Aborts when the client leaves before its answer is written (respond/heavy-work.ts). */
  clientGone?: AbortSignal;
}

/** A request's context on either listener, with its state typed. */
export type RequestContext = ParameterizedContext<RequestState>;
