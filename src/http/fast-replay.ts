import type http from 'node:http';
import type { Socket } from 'node:net';
import { hashKey, looksLikeKey } from '../keys/key-format.ts';
import type { Services } from '../services.ts';
import { readEntry } from './cacheable.ts';
import { limitHeaders } from './limit-headers.ts';
import { requestText, type ReplayTable } from './replay-table.ts';
import { newRequestId, REQUEST_ID } from './request-id.ts';
import { loggableUrl, logMs, requestLineWriter } from './request-log.ts';

/**
 * The hash of the key the connection's last request carried: a keep-alive connection
 * sends one key request after request, and its SHA-256 was the largest single cost
 * of a hit. The key is kept only while its connection is open, as the connection's
 * own request headers hold it.
 */
const lastKey = new WeakMap<Socket, { key: string; hash: string }>();
function keyHash(socket: Socket, key: string): string {
  const memo = lastKey.get(socket);
  if (memo?.key === key) return memo.hash;
  const hash = hashKey(key);
  lastKey.set(socket, { key, hash });
  return hash;
}

/**
 * The common repeat answered below Koa: a GET under /v1 with one well-formed API key
 * this replica holds, no If-None-Match, and a recorded answer whose body the response
 * cache still has. It is answered as the full path would answer it (docs/performance.md
 * "Cached hits below Koa"): the key checked (held by this replica, found by its hash)
 * and charged to its limits, the same headers in the same order (X-Request-Id, the
 * limit headers, the handler's, Content-Length), the same log line, and the same
 * counts (requests, duration, cache hit, replayed answer).
 * What it skips is Koa's per-request context and middleware chain, which cost a
 * cached hit more than the answer itself.
 *
 * Anything else goes to the app untouched, including a request this path began and
 * then left: a key this replica does not hold, or a limit that refuses (a refused
 * request consumes nothing, so the app's own check answers the same 429).
 */
export function fastReplay(services: Pick<Services, 'cache' | 'keys' | 'limits' | 'clock' | 'log' | 'metrics'>, table: ReplayTable, app: http.RequestListener): http.RequestListener {
  const { metrics, log } = services;
  const logLine = requestLineWriter(log);
  // Bound once, as the app's middleware binds what it can: a labelled inc() hashes its labels.
  const replayed = metrics.replayed.labels('200');
  const hits = metrics.cacheLookups.labels('hit');
  const byRoute = new Map<string, { count: { inc(): void }; seconds: { observe(value: number): void } }>();
  const routeMetrics = (route: string) => {
    let bound = byRoute.get(route);
    if (!bound) {
      bound = { count: metrics.requests.labels('public', route, '200', ''), seconds: metrics.requestSeconds.labels('public', route) };
      byRoute.set(route, bound);
    }
    return bound;
  };

  const answer = async (req: http.IncomingMessage, res: http.ServerResponse, key: string, request: string, started: number) => {
    const record = table.find(request);
    const entry = record && services.cache.get(record.answer.cacheKey);
    if (!record || !entry) return app(req, res);
    const holder = services.keys.held(keyHash(req.socket, key));
    if (!holder) return app(req, res);
    services.keys.recordUse(holder.id, services.clock());
    const decision = await services.limits.consume(holder.id);
    if (!decision.allowed) return app(req, res);

    const given = req.headers['x-request-id'];
    const reqId = typeof given === 'string' && REQUEST_ID.test(given) ? given : newRequestId();
    const { body } = readEntry(entry);
    const headers: Record<string, string | string[] | number> = { 'X-Request-Id': reqId, ...limitHeaders(decision) };
    for (const [name, value] of record.headers) headers[name] = value;
    headers['Content-Length'] = body.length;
    res.writeHead(200, headers).end(body);

    hits.inc();
    replayed.inc();
    const elapsed = performance.now() - started;
    const { count, seconds } = routeMetrics(record.route);
    count.inc();
    seconds.observe(elapsed / 1000);
    logLine({ reqId, method: 'GET', urlJson: record.logUrlJson, status: 200, ms: logMs(elapsed), bytes: body.length, key: holder.id });
  };

  return (req, res) => {
    const started = performance.now();
    const { headers } = req;
    const key = headers['x-api-key'];
    // A repeated x-api-key arrives joined by ", ", which the key shape refuses.
    if (req.method !== 'GET' || !req.url?.startsWith('/v1/') || headers['if-none-match'] !== undefined || typeof key !== 'string' || !looksLikeKey(key)) {
      return void app(req, res);
    }
    const request = requestText(req.url, headers.accept ?? '', headers['accept-encoding'] ?? '');
    answer(req, res, key, request, started).catch((err: unknown) => {
      // Before the answer was written the app can still give one (nothing was charged
      // that it would charge again: consume() is the last step that can fail).
      log.error({ err, url: loggableUrl(req.url!) }, 'replay below the app failed');
      if (!res.headersSent) app(req, res);
      else res.destroy();
    });
  };
}
