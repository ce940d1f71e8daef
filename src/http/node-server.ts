import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { type ApiError, HeadersTooLargeError, MalformedRequestError, MethodNotAllowedError, RequestTimeoutError } from '../errors/index.ts';
import { refuseInstead, refuseOnSocket, requestIdOf } from './connection-refusal.ts';
import { newRequestId } from './middleware/request-id.ts';

export interface ConnectionTimeouts {
  /** A request's headers must arrive within this (from the connection's first byte wait). */
  readonly headersMs: number;
  /** A whole request, body included, must arrive within this. */
  readonly requestMs: number;
  /** An idle keep-alive connection is closed after this (Node adds a 1 s grace). */
  readonly keepAliveMs: number;
}

/**
 * A node:http server whose connections cannot be held open by slow or silent
 * clients, and whose own refusals (431, malformed requests, timeouts, a CONNECT, a
 * request without Host) are JSON like every other error and leave a log line. Node's
 * defaults keep a silent connection 60–90 s, answer those cases with an empty body,
 * and a CONNECT with nothing at all.
 */
export function createHttpServer(handler: http.RequestListener, timeouts: ConnectionTimeouts, log: Logger): http.Server {
  const server = http.createServer(
    {
      // Node checks headers and request deadlines on this interval; its 30 s default
      // would let a connection outlive a short deadline by up to 30 s.
      connectionsCheckingInterval: Math.min(1000, timeouts.headersMs),
      // Node's own 400 for a request without Host has an empty body: refused below instead.
      requireHostHeader: false,
    },
    (req, res) => {
      if (req.httpVersion !== '1.1' || req.headers.host !== undefined) return handler(req, res);
      const reqId = newRequestId();
      log.warn({ reqId, method: req.method, status: 400, remote: req.socket.remoteAddress }, 'client error: no Host header');
      refuseInstead(res, new MalformedRequestError(), reqId);
    },
  );
  server.headersTimeout = timeouts.headersMs;
  server.requestTimeout = timeouts.requestMs;
  server.keepAliveTimeout = timeouts.keepAliveMs;
  // Responses under way per connection: a refusal written on the socket itself would land inside one of those.
  const answering = new WeakMap<Duplex, Set<http.ServerResponse>>();
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    const responses = answering.get(socket) ?? new Set();
    answering.set(socket, responses.add(res));
    res.once('close', () => responses.delete(res));
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const refusal = refusalFor(err.code);
    const responses = [...(answering.get(socket) ?? [])];
    // A malformed body (a bad chunk) comes after its request's headers: that request's
    // own response, if it has not started, carries the refusal instead of its answer,
    // and its handler's work stops. A reset connection, or one whose response already
    // started, cannot take one.
    const through = responses.length === 1 && !responses[0]!.headersSent ? responses[0] : undefined;
    const answered = refusal !== undefined && socket.writable && (responses.length === 0 || through !== undefined);
    const reqId = (through && requestIdOf(through)) ?? newRequestId();
    log.warn(
      { reqId, code: err.code, status: answered ? refusal.status : undefined, remote: remoteOf(socket) },
      answered ? 'client error' : 'client error: connection closed without an answer',
    );
    if (!answered) socket.destroy();
    else if (through) refuseInstead(through, refusal, reqId);
    else refuseOnSocket(socket, refusal, reqId);
  });
  // A tunnel request: this is an origin server, not a proxy, so the authority it names
  // is no resource here, and allows no method (an empty Allow, RFC 9110 10.2.1).
  server.on('connect', (req: http.IncomingMessage, socket: Duplex) => {
    const reqId = newRequestId();
    log.warn({ reqId, method: req.method, status: 405, remote: remoteOf(socket) }, 'client error: CONNECT');
    // Whatever the client sends after it is read and dropped, so its close is seen; one that holds the connection loses it.
    socket.resume();
    const held = setTimeout(() => socket.destroy(), timeouts.headersMs);
    socket.once('close', () => clearTimeout(held));
    refuseOnSocket(socket, new MethodNotAllowedError([]), reqId);
  });
  return server;
}

const remoteOf = (socket: Duplex) => (socket as { remoteAddress?: string }).remoteAddress;

function refusalFor(code: string | undefined): ApiError | undefined {
  if (code === 'ECONNRESET') return undefined;
  if (code === 'HPE_HEADER_OVERFLOW') return new HeadersTooLargeError();
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new RequestTimeoutError();
  return new MalformedRequestError();
}
