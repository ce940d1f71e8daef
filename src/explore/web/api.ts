// Every data call of the page: the public /v1 API of this origin, with the key the user
// typed as the x-api-key header. The key lives in sessionStorage only (this tab, gone
// when it closes): never in a URL, localStorage, a cookie or a log line.

const KEY_ITEM = 'dqs-explore-key';

export const readKey = (): string => sessionStorage.getItem(KEY_ITEM) ?? '';
export const saveKey = (key: string) => sessionStorage.setItem(KEY_ITEM, key);
export const forgetKey = () => sessionStorage.removeItem(KEY_ITEM);

/** A refusal from the API, as the spec's error body says it. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly details: unknown,
    /** Seconds from Retry-After (429, 503), when sent. */
    readonly retryAfter: number | undefined,
    /** The body's `hint`: the endpoint that takes a parameter this one refused. */
    readonly hint?: string,
  ) {
    super(`${status} ${error}`);
  }
}

async function send(pathAndQuery: string): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(pathAndQuery, { headers: { 'x-api-key': readKey() }, credentials: 'omit', cache: 'no-store' });
  } catch (err) {
    throw new ApiFailure(0, `The service could not be reached: ${(err as Error).message}`, undefined, undefined);
  }
  if (res.ok) return res;
  const text = await res.text();
  let body: { error?: string; details?: unknown; hint?: string } = {};
  try {
    body = JSON.parse(text);
  } catch {
    body = { error: text || res.statusText };
  }
  const retry = Number(res.headers.get('retry-after'));
  throw new ApiFailure(
    res.status,
    body.error ?? res.statusText,
    body.details,
    Number.isFinite(retry) && retry > 0 ? retry : undefined,
    body.hint,
  );
}

/** GET a /v1 path as JSON. */
export async function getJson<T>(pathAndQuery: string): Promise<T> {
  return (await (await send(pathAndQuery)).json()) as T;
}

/** GET a /v1 path as a file the browser saves: the key goes as a header, so a plain link cannot do it. */
export async function download(pathAndQuery: string, fileName: string): Promise<void> {
  const blob = await (await send(pathAndQuery)).blob();
  saveBlob(blob, fileName);
}

export function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The parts of /openapi.json the page reads: each /v1 operation's parameters, and what each takes. */
export interface OperationParameter {
  readonly name: string;
  readonly in: string;
  readonly description?: string;
  readonly schema?: ParameterSchema;
  /** A dimension filter's datasets. */
  readonly 'x-metrics'?: readonly string[];
  /** Where the page puts its control: among the first ones, nowhere (the page sets it), else under "More options". */
  readonly 'x-explore'?: 'first' | 'page';
}

interface ParameterSchema {
  readonly type?: 'string' | 'integer' | 'boolean' | 'array';
  readonly enum?: readonly string[];
  readonly default?: unknown;
  /** Of a parameter that repeats: each value's. */
  readonly items?: ParameterSchema;
  /** A value's forms: one name, or (`pattern`) several comma-separated. */
  readonly anyOf?: readonly { readonly pattern?: string }[];
}

/**
 * How a parameter is sent and typed, from its schema: repeated or once, as a number
 * or a flag, and whether a value may be several comma-separated (`group_by=region,year`).
 */
export function shapeOf(parameter: OperationParameter | undefined) {
  const schema = parameter?.schema;
  const each = schema?.type === 'array' ? schema.items : schema;
  const list = each?.anyOf?.find((form) => form.pattern)?.pattern;
  return {
    repeats: schema?.type === 'array',
    integer: each?.type === 'integer',
    flag: each?.type === 'boolean',
    /** The values one sent value stands for. */
    split: (value: string) => (list && new RegExp(list).test(value) ? value.split(',') : [value]),
  };
}
