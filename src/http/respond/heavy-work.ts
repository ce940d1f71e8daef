import { DeadlineError, type HeavyKind, QueueFullError } from '../../admission/queue.ts';
import { isOutOfMemory } from '../../duckdb/database.ts';
import { BusyError, ClientGoneError, HeavyBudgetError, QueryTimeoutError } from '../../errors/index.ts';
import type { BudgetState } from '../../limits/budget.ts';
import type { Services } from '../../services.ts';
import type { RequestContext } from '../request-state.ts';
import { requestKey } from './request-key.ts';
import { onResponseClosed } from './response-closed.ts';

// Heavy work (an aggregate computed, a revisions diff, a filtered export, a release
// loaded for release=) takes its key's turn in services.admission, and runs until its
// deadline: QUERY_TIMEOUT_MS from its turn, or less with `Prefer: wait=N` (RFC 7240).
// Whether it waited too long or DuckDB ran out of memory for it, the server is busy,
// not broken: both answer 503 busy with Retry-After, here and nowhere else. Past its
// deadline it answers 504 timeout; a client that left stops it too. Each job's time,
// from its turn to its end or cancellation, is charged to its key's heavy-seconds
// budget; a key that has spent it gets 429 heavy_budget before its work is queued.
// Work shared with other requests (a release loaded, a result identical requests
// compute once) is charged instead as it splits its own running time (TimeShares).

type HeavyServices = Pick<Services, 'admission' | 'metrics' | 'queryTimeoutMs' | 'clock'> & {
  readonly limits: Pick<Services['limits'], 'heavy'>;
};

export interface HeavyOptions {
  /** What cancels the work besides its deadline; by default, the client gone. */
  readonly signal?: AbortSignal;
  /** The rest of an answer already started (an export's later batches): never refused for load, and no deadline. */
  readonly streaming?: boolean;
  /**
   * The work waits for work other requests may wait for too: the request is charged
   * what that work tells `terms.charge` when it ends (after this answer, when the
   * request left it first), not its own time from its turn.
   */
  readonly shared?: boolean;
}

/** A request's terms for heavy work: its key, its deadline, and how its time is charged. */
export interface HeavyTerms {
  /** The request's key. */
  readonly key: string;
  /** The request's deadline, counted from its work's turn; undefined for the rest of a started answer. */
  readonly deadlineMs: number | undefined;
  /** Whether `Prefer: wait` set the deadline (the 504 then says so). */
  readonly preferred: boolean;
  /** Charges `ms` of heavy work to the key, and shows what is left on the answer when it is not sent yet. */
  charge(ms: number): void;
  /** The charges made so far, settled. */
  charged(): Promise<void>;
}

/**
 * The request's terms for heavy work of `kind`: refused with a HeavyBudgetError when
 * its key has spent its heavy seconds (never for the rest of a started answer), and
 * its deadline lowered by `Prefer: wait`, which the answer then says it applied.
 */
export async function heavyTerms(ctx: RequestContext, services: HeavyServices, kind: HeavyKind, streaming = false): Promise<HeavyTerms> {
  const key = requestKey(ctx).id;
  const budget = services.limits.heavy;
  if (!streaming) {
    const state = await budget.read(key);
    showBudget(ctx, state);
    if (state.remainingMs <= 0) {
      services.metrics.heavyRefusals.inc({ reason: 'heavy_budget' });
      throw new HeavyBudgetError(budget.perMinuteMs / 1000, state.retryAfterSeconds);
    }
  }
  const wanted = streaming ? undefined : preferredWaitMs(ctx.get('prefer'));
  const preferred = wanted !== undefined && wanted < services.queryTimeoutMs;
  const deadlineMs = streaming ? undefined : preferred ? wanted : services.queryTimeoutMs;
  if (preferred) ctx.set('Preference-Applied', `wait=${wanted / 1000}`);
  const charges: Array<Promise<void>> = [];
  return {
    key,
    deadlineMs,
    preferred,
    charge: (ms) => {
      services.metrics.heavySeconds.inc({ kind }, ms / 1000);
      charges.push(
        budget.charge(key, ms).then((state) => {
          if (!ctx.headerSent) showBudget(ctx, state);
        }),
      );
    },
    charged: async () => {
      await Promise.all(charges);
    },
  };
}

/**
 * What heavy work's failure answers: past the request's deadline, a QueryTimeoutError
 * naming that deadline; refused for load or out of DuckDB's memory, a BusyError; its
 * client gone, as it is. Cancellations are counted.
 */
export function heavyFailure(err: unknown, services: HeavyServices, kind: HeavyKind, terms: HeavyTerms): unknown {
  if (err instanceof DeadlineError) {
    services.metrics.heavyCancellations.inc({ kind, reason: 'deadline' });
    return new QueryTimeoutError(err.deadlineMs, terms.preferred);
  }
  if (err instanceof ClientGoneError) {
    services.metrics.heavyCancellations.inc({ kind, reason: 'client_gone' });
    return err;
  }
  if (!(err instanceof QueueFullError) && !isOutOfMemory(err)) return err;
  services.metrics.heavyRefusals.inc({ reason: 'busy' });
  // By the wait bound the jobs ahead have had their time.
  return new BusyError(Math.ceil(services.admission.maxWaitMs / 1000));
}

/**
 * Runs `work` in the request's key's turn, with a signal that aborts when it is to
 * stop: past its deadline, or when `options.signal` aborts. A refusal for load is a
 * BusyError; a deadline passed, a QueryTimeoutError; a key whose heavy seconds are
 * spent, a HeavyBudgetError (never for the rest of a response already started).
 */
export async function heavyWork<T>(
  ctx: RequestContext,
  services: HeavyServices,
  kind: HeavyKind,
  work: (signal: AbortSignal, terms: HeavyTerms) => Promise<T>,
  options: HeavyOptions = {},
): Promise<T> {
  const { signal = clientGone(ctx), streaming = false, shared = false } = options;
  const terms = await heavyTerms(ctx, services, kind, streaming);
  let started: number | undefined;
  const timed = (own: AbortSignal) => {
    started = services.clock();
    return work(own, terms);
  };
  try {
    return await services.admission.run(terms.key, kind, timed, { signal, deadlineMs: terms.deadlineMs, refusable: !streaming });
  } catch (err) {
    throw heavyFailure(err, services, kind, terms);
  } finally {
    // Charged when the job ends or is cancelled; a job refused before its turn spent nothing.
    if (started !== undefined && !shared) terms.charge(services.clock() - started);
    // Shared work that ended before this answer has charged it already: shown on it.
    await terms.charged();
  }
}

/** X-Heavy-Remaining: whole seconds of heavy work the key has left in the rolling minute. */
function showBudget(ctx: RequestContext, state: BudgetState): void {
  ctx.set('X-Heavy-Remaining', String(Math.floor(state.remainingMs / 1000)));
}

/**
 * The request's signal: aborts with a ClientGoneError when its connection closes
 * before the answer has been written. One per request.
 */
export function clientGone(ctx: RequestContext): AbortSignal {
  const made = ctx.state.clientGone;
  if (made) return made;
  const controller = new AbortController();
  onResponseClosed(ctx, (finished) => {
    if (!finished) controller.abort(new ClientGoneError());
  });
  ctx.state.clientGone = controller.signal;
  return controller.signal;
}

const PREFER_WAIT = /(?:^|[,;])\s*wait\s*=\s*"?(\d{1,9}(?:\.\d{1,3})?)"?\s*(?=[,;]|$)/i;

/**
 * The `wait` preference of a Prefer header (RFC 7240 4.3), in milliseconds: decimal
 * seconds, at least 1 ms. A malformed one is ignored, as RFC 7240 has a server do
 * with a preference it does not understand.
 */
export function preferredWaitMs(header: string): number | undefined {
  const match = PREFER_WAIT.exec(header);
  return match ? Math.max(1, Math.round(Number(match[1]) * 1000)) : undefined;
}
