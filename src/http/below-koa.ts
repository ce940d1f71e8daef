import type http from 'node:http';
import type { KeyRecord } from '../keys/store.ts';
import type { Decision } from '../limits/limiter.ts';
import type { Services } from '../services.ts';
import { chargeKey, chargeKeyHere, isV1 } from './middleware/api-key.ts';
import { limitHeaders } from './middleware/limit-headers.ts';
import { recordedEntry, replayedBody } from './middleware/replay.ts';
import { type Recorded, type ReplayTable, requestText } from './middleware/replay-table.ts';
import { requestIdFor } from './middleware/request-id.ts';
import { loggableUrl, requestLogger } from './middleware/request-log.ts';
import { requestCounter } from './middleware/request-metrics.ts';

/**
 * The public listener's request handler: a repeated request with a recorded answer is
 * answered here, below Koa, by the same steps the app's pipeline takes
 * (src/http/middleware/pipeline.ts), in the same order; everything else goes to `app`.
 *
 * What it skips is Koa's per-request context and middleware chain, which cost a
 * cached hit more than the answer itself (docs/performance.md). It answers a GET
 * under /v1 with one well-formed key this replica holds, no If-None-Match, and a
 * recorded answer whose body the response cache still has: its request id, the key
 * charged to its limits, the answer's headers and body, its count and its log line.
 * Anything else (a 304, a key only the shared store knows, a limit that refuses, which
 * charges nothing) is left to the app untouched, which answers it in full.
 */
export function answerRepeatsBelowKoa(services: Services, table: ReplayTable, app: http.RequestListener): http.RequestListener {
  const count = requestCounter(services.metrics, 'public');
  const { log } = services;
  const logRequest = requestLogger(log);

  /** Writes the recorded answer once the key's limit decided: the app answers a refusal, which charged nothing. */
  const send = (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    wanted: Wanted,
    holder: KeyRecord,
    record: Recorded,
    entry: Buffer,
    decision: Decision,
    started: number,
  ) => {
    if (!decision.allowed) return app(req, res);
    const requestId = requestIdFor(wanted.requestId);
    const body = replayedBody(services, entry);
    // In the order the app sets them: X-Request-Id, the limit headers, the handler's, Content-Length.
    // Every value a string, as Koa's ctx.set makes them: node tests each against a pattern, slowly for a number.
    const headers: (string | string[])[] = limitHeaders(decision);
    headers.unshift('X-Request-Id', requestId);
    for (const [name, value] of record.headers) headers.push(name, value);
    headers.push('Content-Length', String(body.length));
    res.writeHead(200, headers as string[]).end(body);
    const ms = performance.now() - started;
    count(record.route, 200, '', ms / 1000);
    logRequest({
      reqId: requestId,
      method: 'GET',
      url: record.logUrl,
      status: 200,
      ms: Math.round(ms * 100) / 100,
      bytes: body.length,
      key: holder.id,
    });
  };

  const failed = (req: http.IncomingMessage, res: http.ServerResponse, err: unknown) => {
    // Before the answer was written the app can still give one: nothing it would charge again was charged.
    log.error({ err, url: loggableUrl(req.url!) }, 'answering a repeat below Koa failed');
    if (!res.headersSent) app(req, res);
    else res.destroy();
  };

  return (req, res) => {
    const started = performance.now();
    const { url } = req;
    if (req.method !== 'GET' || url === undefined || !isV1(url)) return app(req, res);
    const wanted = wantedHeaders(req.rawHeaders);
    if (!wanted || wanted.conditional || wanted.key === undefined) return app(req, res);
    const record = table.find(requestText(url, wanted.accept ?? '', wanted.encoding ?? ''));
    const entry = record && recordedEntry(services, record);
    if (!record || !entry) return app(req, res);
    const holder = services.keys.held(wanted.key);
    if (!holder) return app(req, res);
    try {
      // A limiter in this process decides at once; a shared one answers later.
      const decision = chargeKeyHere(services, holder);
      if (decision) send(req, res, wanted, holder, record, entry, decision, started);
      else
        chargeKey(services, holder)
          .then((d) => send(req, res, wanted, holder, record, entry, d, started))
          .catch((err: unknown) => failed(req, res, err));
    } catch (err) {
      failed(req, res, err);
    }
  };
}

/** The request headers this path reads. */
interface Wanted {
  key?: string;
  accept?: string;
  encoding?: string;
  requestId?: string;
  conditional?: boolean;
}

const WANTED: Record<string, keyof Wanted> = {
  'x-api-key': 'key',
  accept: 'accept',
  'accept-encoding': 'encoding',
  'x-request-id': 'requestId',
  'if-none-match': 'conditional',
};
const WANTED_LENGTHS = new Set(Object.keys(WANTED).map((name) => name.length));

/**
 * The headers this path reads, from the list node parsed (`req.headers` builds an
 * object of every header the client sent). A request naming one of them twice is the
 * app's (undefined): it tells a repeated key from one key, and joins the others as node does.
 */
function wantedHeaders(raw: readonly string[]): Wanted | undefined {
  // Every field from the start: one object shape for every request.
  const wanted: Wanted = { key: undefined, accept: undefined, encoding: undefined, requestId: undefined, conditional: undefined };
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
