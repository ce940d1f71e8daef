import type { Logger } from 'pino';
import { mayBeToken } from '../../invites/store.ts';
import { mayBeKey } from '../../keys/key-format.ts';
import type { RequestContext } from '../request-state.ts';
import { decodedFully } from './decoded-fully.ts';

const MAX_URL = 512;

// Keys belong in the x-api-key header, but a client may paste one into the URL;
// it must not reach the logs in plain or percent-encoded form.
const KEY_IN_URL = /sk(?:_|%5f)live(?:_|%5f)[^&/#;]*/gi;
// Invite tokens travel in claim URLs (/claim/<token>): a log reader must not be able to claim one.
const TOKEN_IN_URL = /\/claim\/(?!assets\/)[^/?#]+/gi;

/** The URL as logged: keys and invite tokens redacted, then cut to a bounded length. */
export function loggableUrl(url: string): string {
  const redacted = redactEncodedKeys(
    redactTokenSegments(url).replace(KEY_IN_URL, 'sk_live_[redacted]').replace(TOKEN_IN_URL, '/claim/[redacted]'),
  );
  return redacted.length > MAX_URL ? `${redacted.slice(0, MAX_URL)}…` : redacted;
}

// What an encoded or bare key needs to appear at all: a percent sign, a `+`, "live",
// or a run of 40 letters and digits. Most URLs have none, and are not split.
const MAY_HIDE_KEY = /%|\+|live|[0-9A-Za-z]{40}/i;

/**
 * Each path segment and query name or value that, percent-decoded to a fixed point,
 * may hold a key: a key encoded any number of times, with its underscores as `+`, or
 * its secret, alone or run into other letters and digits. The whole piece is replaced.
 */
function redactEncodedKeys(url: string): string {
  if (!MAY_HIDE_KEY.test(url)) return url;
  return url
    .split(/([/?&#;=])/)
    .map((piece, i) => (i % 2 === 0 && piece !== '' && mayBeKey(decodedFully(piece)) ? '[redacted]' : piece))
    .join('');
}

/**
 * A token pasted where an id belongs (`admin invite revoke <token>` puts it in the
 * path), plain or percent-encoded: each path segment that may hold one is replaced.
 */
function redactTokenSegments(url: string): string {
  const end = url.search(/[?#]/);
  const path = end < 0 ? url : url.slice(0, end);
  // Most paths hold neither, and need no splitting.
  if (!/inv|%/.test(path)) return url;
  const segments = path.split('/').map((segment) => (mayBeToken(decodedFully(segment)) ? '[redacted]' : segment));
  return segments.join('/') + (end < 0 ? '' : url.slice(end));
}

/** What the request log says of one answered request (`msg: "request"`). */
interface RequestLine {
  readonly reqId: string;
  readonly method: string;
  /** The URL as logged (loggableUrl). */
  readonly url: string;
  readonly status: number;
  /** Milliseconds, to two decimals. */
  readonly ms: number;
  readonly bytes?: number;
  /** The API key's id, when the request had a valid one. */
  readonly key?: string;
  /** The error catalog's code, when the answer is an error. */
  readonly code?: string;
}

/** What the request log says of the request `ctx` answered in `ms` milliseconds. */
function requestLine(ctx: RequestContext, ms: number): RequestLine {
  return {
    reqId: ctx.state.requestId,
    method: ctx.method,
    url: loggableUrl(ctx.url),
    // Sent already only when the connection's own refusal answered in the handler's place (src/http/node-server.ts).
    status: ctx.res.headersSent ? ctx.res.statusCode : ctx.status,
    ms: Math.round(ms * 100) / 100,
    bytes: ctx.length,
    key: ctx.state.key?.id,
    code: ctx.state.errorCode,
  };
}

/** The request log's one JSON line (`msg: "request"`) for the request `ctx` answered in `ms` milliseconds. */
export function logRequest(log: Logger, ctx: RequestContext, ms: number): void {
  log.info(requestLine(ctx, ms), 'request');
}
