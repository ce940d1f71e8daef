import { Readable } from 'node:stream';
import { ExportLimitError } from '../../errors/index.ts';
import type { Decision, WindowState } from '../../limits/limiter.ts';
import type { Services } from '../../services.ts';
import type { RequestContext } from '../request-state.ts';
import { heavyWork } from './heavy-work.ts';
import { openExport } from './open-export.ts';
import { requestKey } from './request-key.ts';
import { onResponseClosed } from './response-closed.ts';

// What an answer of any size costs, and how it streams: a filtered export
// (routes/export.ts), and a whole revisions diff as CSV or Arrow (routes/revisions.ts),
// which can be as large (docs/api.md "Bulk export", "Releases and revisions").

/** Counts one export against the key's daily export budget (`charge` false: reads it only) and shows it in headers. */
export async function exportBudget(ctx: RequestContext, services: Services, charge: boolean): Promise<Decision> {
  const { id } = requestKey(ctx);
  const decision = charge ? await services.limits.exports.consume(id) : await services.limits.exports.peek(id);
  const day = decision.windows.find((w: WindowState) => w.name === 'day') ?? decision.windows[0]!;
  ctx.set('X-Export-Limit', String(day.limit));
  ctx.set('X-Export-Remaining', String(day.remaining));
  ctx.set('X-Export-Reset', String(day.resetSeconds));
  return decision;
}

/** Charges one export to the key's daily budget, or throws the 429 when it is spent. */
export async function chargeExport(ctx: RequestContext, services: Services): Promise<void> {
  const decision = await exportBudget(ctx, services, true);
  if (!decision.allowed) throw new ExportLimitError(services.limits.exports.policy.perMinute, decision.retryAfterSeconds);
}

export interface ExportStream {
  /**
   * What the stream reads, made once the key may open another export and has budget
   * left (heavy work of its own, such as a diff, runs here, before the first part):
   * the parts of the body. `stop` aborts with whatever cancels a part's turn.
   */
  readonly parts: (stop: AbortSignal) => Promise<AsyncGenerator<Buffer>>;
  readonly contentType: string;
  readonly filename: string;
  readonly cacheControl: string;
}

/**
 * Answers with a body streamed part by part, charged as one export: open while it
 * streams (EXPORTS_OPEN_PER_KEY, EXPORT_IDLE_SECONDS), its budget read before the work
 * and spent once the first part is ready, and each part made in the key's turn for
 * heavy work. Whatever the parts hold is let go when the response closes.
 */
export async function respondWithExportStream(ctx: RequestContext, services: Services, stream: ExportStream): Promise<void> {
  let parts: AsyncGenerator<Buffer> | undefined;
  const stop = new AbortController();
  onResponseClosed(ctx, () => void parts?.return(undefined));
  openExport(ctx, services);
  // Read before the work, charged after it: a key whose budget is spent sets nothing running, and a busy server charges nothing.
  const spent = await exportBudget(ctx, services, false);
  if (!spent.allowed) throw new ExportLimitError(services.limits.exports.policy.perMinute, spent.retryAfterSeconds);
  parts = await stream.parts(stop.signal);
  const first = await inTurns(ctx, services, parts, stop);
  await chargeExport(ctx, services);
  ctx.set('Content-Disposition', `attachment; filename="${stream.filename}"`);
  ctx.set('Cache-Control', stream.cacheControl);
  ctx.type = stream.contentType;
  ctx.body = Readable.from(first, { objectMode: false, highWaterMark: 1 });
}

/**
 * `parts` with each part made in the key's turn for heavy work (a batch of rows read
 * and rendered, the filtered Parquet file written). The first is made before the
 * answer starts, within the deadline: a server too busy for it answers a clean 503,
 * and one too slow a 504, not a cut-off file. The parts after it wait for their turns
 * but are never refused and have no deadline: the 200 has been sent, and
 * EXPORT_IDLE_SECONDS bounds a stream nobody reads. `stop` aborts with whatever
 * cancels a turn, so the part being made stops too.
 */
async function inTurns(
  ctx: RequestContext,
  services: Services,
  parts: AsyncGenerator<Buffer>,
  stop: AbortController,
): Promise<AsyncIterable<Buffer>> {
  const next = (streaming: boolean) =>
    heavyWork(
      ctx,
      services,
      'export',
      (signal) => {
        const relay = () => stop.abort(signal.reason);
        signal.addEventListener('abort', relay, { once: true });
        return parts.next().finally(() => signal.removeEventListener('abort', relay));
      },
      { streaming },
    );
  const first = await next(false);
  return (async function* () {
    for (let part: IteratorResult<Buffer> = first; !part.done; part = await next(true)) yield part.value;
  })();
}
