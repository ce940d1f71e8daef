import type http from 'node:http';
import type { Socket } from 'node:net';
import { hashKey, looksLikeKey } from '../keys/key-format.ts';
import type { KeyRecord } from '../keys/store.ts';
import type { Decision } from '../limits/limiter.ts';
import type { Services } from '../services.ts';
import { readEntry } from './cacheable.ts';
import { limitHeaders } from './limit-headers.ts';
import { requestText, type Recorded, type ReplayTable } from './replay-table.ts';
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

/** The request headers this path reads. */
interface Wanted {
  key?: string;
  accept?: string;
  encoding?: string;
  requestId?: string;
  conditional?: boolean;
}

const WANTED: Record<string, keyof Wanted> = { 'x-api-key': 'key', accept: 'accept', 'accept-encoding': 'encoding', 'x-request-id': 'requestId', 'if-none-match': 'conditional' };
const WANTED_LENGTHS = new Set(Object.keys(WANTED).map((name) => name.length));

/**
 * The headers this path reads, from the raw list node parsed: `req.headers` builds
 * an object keyed by every name the client sent, which cost a hit more than reading
 * these five. A request naming one of them twice is left to the app (undefined),
 * which joins repeats as node does.
 */
function wantedHeaders(raw: readonly string[]): Wanted | undefined {
  const wanted: Wanted = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (!WANTED_LENGTHS.has(name.length)) continue;
    const field = WANTED[name.toLowerCase()];
    if (field === undefined) continue;
    if (wanted[field] !== undefined) return undefined;
    if (field === 'conditional') wanted.conditional = true;
    else wanted[field] = raw[i + 1]!;
  }
  return wanted;
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

  const send = (req: http.IncomingMessage, res: http.ServerResponse, given: string | undefined, record: Recorded, entry: Buffer, holder: KeyRecord, decision: Decision, started: number) => {
    if (!decision.allowed) return void app(req, res);
    const reqId = given !== undefined && REQUEST_ID.test(given) ? given : newRequestId();
    const { body } = readEntry(entry);
    // Flat pairs in the app's order: node's writeHead takes them as they are.
    const headers: (string | string[] | number)[] = ['X-Request-Id', reqId, ...limitHeaders(decision)];
    for (const [name, value] of record.headers) headers.push(name, value);
    headers.push('Content-Length', body.length);
    res.writeHead(200, headers as string[]).end(body);

    hits.inc();
    replayed.inc();
    const elapsed = performance.now() - started;
    const { count, seconds } = routeMetrics(record.route);
    count.inc();
    seconds.observe(elapsed / 1000);
    logLine({ reqId, method: 'GET', urlJson: record.logUrlJson, status: 200, ms: logMs(elapsed), bytes: body.length, key: holder.id });
  };

  const failed = (req: http.IncomingMessage, res: http.ServerResponse, err: unknown) => {
    // Before the answer was written the app can still give one (nothing was charged
    // that it would charge again: consume() is the last step that can fail).
    log.error({ err, url: loggableUrl(req.url!) }, 'replay below the app failed');
    if (!res.headersSent) app(req, res);
    else res.destroy();
  };

  return (req, res) => {
    const started = performance.now();
    if (req.method !== 'GET' || !req.url?.startsWith('/v1/')) return void app(req, res);
    const headers = wantedHeaders(req.rawHeaders);
    const key = headers?.key;
    if (!headers || headers.conditional || key === undefined || !looksLikeKey(key)) return void app(req, res);
    const record = table.find(requestText(req.url, headers.accept ?? '', headers.encoding ?? ''));
    const entry = record && services.cache.get(record.answer.cacheKey);
    if (!record || !entry) return void app(req, res);
    const holder = services.keys.held(keyHash(req.socket, key));
    if (!holder) return void app(req, res);
    try {
      services.keys.recordUse(holder.id, services.clock());
      // A limiter in this process decides at once; one across the network later.
      const decision = services.limits.consume(holder.id);
      if (decision instanceof Promise) decision.then((d) => send(req, res, headers.requestId, record, entry, holder, d, started)).catch((err: unknown) => failed(req, res, err));
      else send(req, res, headers.requestId, record, entry, holder, decision, started);
    } catch (err) {
      failed(req, res, err);
    }
  };
}
