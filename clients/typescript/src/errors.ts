import type { ErrorDetails } from './types.ts';

/**
 * The service answered with an error (spec 7): `error` for diagnostics, `details` for
 * field-level problems. `resumeCursor` is where a walk stopped: pass it as `cursor`
 * to carry on from the page that failed (undefined: from the start).
 */
export class DataQueryError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly details: ErrorDetails | undefined,
    readonly retryAfterSeconds: number | undefined,
    readonly requestId: string | undefined,
    public resumeCursor?: string,
  ) {
    super(`${status}: ${error}`);
    this.name = 'DataQueryError';
  }
}

/** The service could not be reached (after the retries allowed); `cause` is the last failure. */
export class DataQueryNetworkError extends Error {
  constructor(
    message: string,
    options: { cause: unknown },
    public resumeCursor?: string,
  ) {
    super(message, options);
    this.name = 'DataQueryNetworkError';
  }
}
