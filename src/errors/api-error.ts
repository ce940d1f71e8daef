// The base of the error catalog (spec section 7): each error carries its status,
// body and stable code; one middleware renders them (src/http/middleware/errors.ts).

export interface FlatDetails {
  formErrors: string[];
  fieldErrors: Record<string, string[]>;
}

export interface ErrorBody {
  error: string;
  details?: FlatDetails;
  retryAfterSeconds?: number;
  /** The way to what was asked, beside an `error` text the spec fixes (docs/api.md "Errors the spec leaves open"). */
  hint?: string;
}

export class ApiError extends Error {
  /**
   * The stable machine name of this error (docs/api.md "Error codes"), used in logs
   * and metrics, never in bodies: the spec fixes those. Each class below names its own,
   * so renaming a class changes no dashboard; the default only covers one that forgets.
   */
  readonly code: string;

  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.error);
    this.name = new.target.name;
    this.code = new.target.name
      .replace(/Error$/, '')
      .replace(/(?<=[a-z])(?=[A-Z])/g, '_')
      .toLowerCase();
  }
}

export class InternalError extends ApiError {
  override readonly code = 'internal';

  constructor() {
    super(500, { error: 'Internal server error' });
  }
}
