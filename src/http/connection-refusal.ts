import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { ApiError } from '../errors/index.ts';
import { EVERY_ANSWER } from './every-answer.ts';

// The answers the connection gives itself, before or in place of the app's: refusals
// of what Node's parser spots (node-server.ts). They are errors like any other: JSON,
// never cached, with the headers every answer carries, and the connection closes after.

function head(refusal: ApiError, body: string, requestId: string): Record<string, string | number> {
  return {
    ...refusal.headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    ...EVERY_ANSWER,
    'X-Request-Id': requestId,
    Connection: 'close',
  };
}

/** Writes `refusal` on a socket no response is under way on, and ends it. */
export function refuseOnSocket(socket: Duplex, refusal: ApiError, requestId: string): void {
  const body = JSON.stringify(refusal.body);
  const lines = Object.entries(head(refusal, body, requestId)).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(`HTTP/1.1 ${refusal.status} ${http.STATUS_CODES[refusal.status]}\r\n${lines.join('')}\r\n${body}`);
}

const instead = new WeakMap<http.ServerResponse, ApiError>();

/**
 * Writes `refusal` through a response its handler may have started on but not sent,
 * and ends the connection after it. Nothing the handler set stays (its ETag and
 * Cache-Control describe an answer that will never be sent) but the request's id, so
 * the refusal and the request's log line name the same request.
 */
export function refuseInstead(res: http.ServerResponse, refusal: ApiError, requestId: string): void {
  for (const name of res.getHeaderNames()) res.removeHeader(name);
  instead.set(res, refusal);
  const body = JSON.stringify(refusal.body);
  res.writeHead(refusal.status, head(refusal, body, requestId)).end(body);
  res.once('finish', () => res.socket?.end());
}

/** The id the app named a response's request by (X-Request-Id), once it has. */
export function requestIdOf(res: http.ServerResponse): string | undefined {
  const id = res.getHeader('x-request-id');
  return typeof id === 'string' ? id : undefined;
}

/**
 * The connection's refusal a response carries in place of its handler's answer, if
 * it does: that answer was never written, so the handler's work is to stop as for a
 * client that left (response-closed.ts), and the request is logged with its code.
 */
export const refusalInstead = (res: http.ServerResponse): ApiError | undefined => instead.get(res);
