import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { type ApiError, HeadersTooLargeError, MalformedRequestError, RequestTimeoutError } from '../errors/index.ts';
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
 * clients, and whose parser-level refusals (431, malformed requests, timeouts) are
 * JSON like every other error and leave a log line. Node's defaults keep a silent
 * connection 60–90 s and answer those cases with an empty body.
 */
export function createHttpServer(handler: http.RequestListener, timeouts: ConnectionTimeouts, log: Logger): http.Server {
  const server = http.createServer(
    // Node checks headers and request deadlines on this interval; its 30 s default
    // would let a connection outlive a short deadline by up to 30 s.
    { connectionsCheckingInterval: Math.min(1000, timeouts.headersMs) },
    handler,
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
    const reqId = newRequestId();
    const responses = [...(answering.get(socket) ?? [])];
    // A malformed body (a bad chunk) comes after its request's headers: that request's
    // own response, if it has not started, carries the refusal instead of its answer.
    // A reset connection, or one whose response already started, cannot take one.
    const through = responses.length === 1 && !responses[0]!.headersSent ? responses[0] : undefined;
    const answered = refusal !== undefined && socket.writable && (responses.length === 0 || through !== undefined);
    log.warn(
      {
        reqId,
        code: err.code,
        status: answered ? refusal.status : undefined,
        remote: (socket as { remoteAddress?: string }).remoteAddress,
      },
      answered ? 'client error' : 'client error: connection closed without an answer',
    );
    if (!answered) {
      socket.destroy();
      return;
    }
    const body = JSON.stringify(refusal.body);
    const headers = { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': reqId, Connection: 'close' };
    if (through) {
      // The handler still running finds its response ended, and writes nothing (Koa checks).
      through.writeHead(refusal.status, { ...headers, 'Content-Length': Buffer.byteLength(body) }).end(body);
      through.once('finish', () => socket.end());
      return;
    }
    socket.end(
      `HTTP/1.1 ${refusal.status} ${http.STATUS_CODES[refusal.status]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nX-Request-Id: ${reqId}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}

function refusalFor(code: string | undefined): ApiError | undefined {
  if (code === 'ECONNRESET') return undefined;
  if (code === 'HPE_HEADER_OVERFLOW') return new HeadersTooLargeError();
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new RequestTimeoutError();
  return new MalformedRequestError();
}
