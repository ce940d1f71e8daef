import type { Context } from 'koa';
import { type HeavyKind, QueueFullError } from '../../admission/queue.ts';
import { isOutOfMemory } from '../../duckdb/database.ts';
import { BusyError } from '../../errors/index.ts';
import type { Services } from '../../services.ts';
import { requestKey } from './request-key.ts';

// Heavy work (an aggregate computed, a revisions diff, a filtered export, a release
// loaded for release=) takes its key's turn in services.admission. Whether it waited
// too long or DuckDB ran out of memory for it, the server is busy, not broken: both
// answer 503 busy with Retry-After, here and nowhere else.

type HeavyServices = Pick<Services, 'admission' | 'metrics'>;

/** Runs `work` in the request's key's turn; a refusal for load is a BusyError. */
export async function heavyWork<T>(ctx: Context, services: HeavyServices, kind: HeavyKind, work: () => Promise<T>): Promise<T> {
  try {
    return await services.admission.run(requestKey(ctx).id, kind, work);
  } catch (err) {
    if (!(err instanceof QueueFullError) && !isOutOfMemory(err)) throw err;
    services.metrics.heavyRefusals.inc({ reason: 'busy' });
    // By the wait bound the jobs ahead have had their time.
    throw new BusyError(Math.ceil(services.admission.maxWaitMs / 1000));
  }
}
