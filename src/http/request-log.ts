import type { Middleware } from 'koa';
import pino, { type Logger } from 'pino';
import { mayBeToken } from '../invites/store.ts';

const MAX_URL = 512;

// Keys belong in the x-api-key header, but a client may paste one into the URL;
// it must not reach the logs in plain or percent-encoded form.
const KEY_IN_URL = /sk(?:_|%5f)live(?:_|%5f)[^&/#;]*/gi;
// Invite tokens travel in claim URLs (/claim/<token>): a log reader must not be able to claim one.
const TOKEN_IN_URL = /\/claim\/(?!assets\/)[^/?#]+/gi;

/** The URL as logged: keys and invite tokens redacted, then cut to a bounded length. */
export function loggableUrl(url: string): string {
  const redacted = redactTokenSegments(url).replace(KEY_IN_URL, 'sk_live_[redacted]').replace(TOKEN_IN_URL, '/claim/[redacted]');
  return redacted.length > MAX_URL ? `${redacted.slice(0, MAX_URL)}…` : redacted;
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
  const segments = path.split('/').map((segment) => (mayBeToken(decoded(segment)) ? '[redacted]' : segment));
  return segments.join('/') + (end < 0 ? '' : url.slice(end));
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export interface RequestLine {
  readonly reqId: string;
  readonly method: string;
  /** The URL as logged (loggableUrl), already JSON-encoded: a repeated request's is encoded once. */
  readonly urlJson: string;
  readonly status: number;
  readonly ms: number;
  readonly bytes?: number;
  readonly key?: string;
  readonly code?: string;
}

/**
 * Writes the request log's line (`msg: "request"`) as pino would, straight to the
 * logger's destination: pino's generic serializer (walking an object, escaping each
 * string, a new Date per line) cost a cached hit a quarter of its throughput. Every
 * field but the URL is a token that needs no escaping (request ids are checked
 * against REQUEST_ID or made here, key ids and error codes are ours), and the time
 * text is made once per millisecond. The logger's level and bindings are honoured;
 * `pino.symbols` is pino's interface for integrators.
 */
export function requestLineWriter(log: Logger): (line: RequestLine) => void {
  const stream = (log as unknown as Record<symbol, { write(text: string): void }>)[pino.symbols.streamSym];
  if (!stream) throw new Error('requestLineWriter needs a pino logger: it writes to its destination');
  const bindings = (log as unknown as Record<symbol, string>)[pino.symbols.chindingsSym] ?? '';
  let lastMs = -1;
  let time = '';
  return (line) => {
    if (!log.isLevelEnabled('info')) return;
    const now = Date.now();
    if (now !== lastMs) {
      lastMs = now;
      time = new Date(now).toISOString();
    }
    stream.write(
      `{"level":30,"time":"${time}"${bindings},"reqId":"${line.reqId}","method":"${line.method}","url":${line.urlJson},"status":${line.status},"ms":${line.ms}` +
        `${line.bytes === undefined ? '' : `,"bytes":${line.bytes}`}${line.key === undefined ? '' : `,"key":"${line.key}"`}${line.code === undefined ? '' : `,"code":"${line.code}"`},"msg":"request"}\n`,
    );
  };
}

/** Milliseconds to two decimals, as the log writes them. */
export const logMs = (ms: number) => Math.round(ms * 100) / 100;

/** One JSON line per request, written when the response is done; `code` names an error's catalog code. */
export function logRequests(log: Logger): Middleware {
  const write = requestLineWriter(log);
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      write({
        reqId: ctx.state.requestId,
        method: ctx.method,
        urlJson: JSON.stringify(loggableUrl(ctx.url)),
        status: ctx.status,
        ms: logMs(performance.now() - started),
        bytes: ctx.length,
        key: ctx.state.key?.id,
        code: ctx.state.errorCode,
      });
    }
  };
}
