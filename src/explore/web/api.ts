// Every data call of the page: the public /v1 API of this origin, with the key the user
// typed as the x-api-key header. The key lives in sessionStorage only (this tab, gone
// when it closes): never in a URL, localStorage, a cookie or a log line.

const KEY_ITEM = 'dqs-explore-key';

export const readKey = (): string => sessionStorage.getItem(KEY_ITEM) ?? '';
export const saveKey = (key: string) => {
  if (key !== readKey()) forgetAnswers();
  sessionStorage.setItem(KEY_ITEM, key);
};
export const forgetKey = () => {
  forgetAnswers();
  sessionStorage.removeItem(KEY_ITEM);
};

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

let answered: () => void = () => {};
/** Told after each answer the API gives the page (the usage panel's own excepted), whatever its status. */
export const onAnswered = (listener: () => void) => {
  answered = listener;
};

async function send(pathAndQuery: string, headers: Record<string, string> = {}): Promise<Response> {
  let res: Response;
  try {
    // `no-store` keeps the browser's HTTP cache out: the answers the page keeps are the
    // store below, in this page's memory only and emptied with the key. The HTTP cache
    // would keep one key's answers on disk past the tab and hand them to another key
    // (the answers vary on Accept-Encoding, not on x-api-key).
    res = await fetch(pathAndQuery, { headers: { 'x-api-key': readKey(), ...headers }, credentials: 'omit', cache: 'no-store' });
  } catch (err) {
    throw new ApiFailure(0, `The service could not be reached: ${(err as Error).message}`, undefined, undefined);
  }
  if (!pathAndQuery.startsWith('/v1/usage')) answered();
  if (res.ok || res.status === 304) return res;
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

// The page's answers, kept for its life per URL, so that no URL is asked twice in full:
// an answer the server's Cache-Control still calls fresh (`max-age`, counted from when
// it arrived; never under `no-cache`) is reused without a request; one that is not is
// asked again with If-None-Match, and a 304 reuses the body kept. Each request counts
// against the key's limits, a 304 too (the limiter runs before the answer is looked
// up): only a fresh answer costs nothing. Refusals are not kept. Answers belong to one
// key, so a key saved or forgotten empties the store. At most MAX_KEPT answers, the
// least recently read dropped first: a long session stays bounded, and a dropped answer
// costs only its request again.

interface Kept {
  readonly body: unknown;
  readonly etag: string | null;
  /** performance.now() until which the answer may be reused unasked. */
  freshUntil: number;
}

const MAX_KEPT = 200;
/** In the order last read, oldest first. */
const kept = new Map<string, Kept>();
const asking = new Map<string, Promise<unknown>>();
/** Bumped when the store is emptied, so an answer asked for under the key before is not kept. */
let keyEpoch = 0;

function forgetAnswers(): void {
  kept.clear();
  asking.clear();
  keyEpoch++;
}

/** Read (or kept) now: moved to the end of the store's order, the oldest dropped past MAX_KEPT. */
function keep(pathAndQuery: string, answer: Kept): void {
  kept.delete(pathAndQuery);
  kept.set(pathAndQuery, answer);
  if (kept.size > MAX_KEPT) kept.delete(kept.keys().next().value!);
}

/** Until when an answer with this Cache-Control may be reused without asking (0: it may not). */
function freshUntil(cacheControl: string | null): number {
  const directives = (cacheControl ?? '').toLowerCase();
  const maxAge = /(?:^|,)\s*max-age=(\d+)/.exec(directives);
  if (!maxAge || /(?:^|,)\s*(?:no-cache|no-store)\b/.test(directives)) return 0;
  return performance.now() + Number(maxAge[1]) * 1000;
}

async function ask(pathAndQuery: string): Promise<unknown> {
  const epoch = keyEpoch;
  const before = kept.get(pathAndQuery);
  const res = await send(pathAndQuery, before?.etag ? { 'if-none-match': before.etag } : {});
  const cacheControl = res.headers.get('cache-control');
  if (res.status === 304 && before) {
    before.freshUntil = freshUntil(cacheControl);
    if (epoch === keyEpoch) keep(pathAndQuery, before);
    return before.body;
  }
  const body: unknown = await res.json();
  const etag = res.headers.get('etag');
  const until = freshUntil(cacheControl);
  if (epoch === keyEpoch && !/no-store/i.test(cacheControl ?? '') && (etag || until > performance.now())) {
    keep(pathAndQuery, { body, etag, freshUntil: until });
  }
  return body;
}

/** GET a path of this origin as JSON, through the page's store: concurrent asks of one URL share one request. */
export function getJson<T>(pathAndQuery: string): Promise<T> {
  const stored = kept.get(pathAndQuery);
  if (stored && stored.freshUntil > performance.now()) {
    keep(pathAndQuery, stored);
    return Promise.resolve(stored.body as T);
  }
  let answer = asking.get(pathAndQuery);
  if (!answer) {
    const asked = ask(pathAndQuery).finally(() => {
      if (asking.get(pathAndQuery) === asked) asking.delete(pathAndQuery);
    });
    asking.set(pathAndQuery, asked);
    answer = asked;
  }
  return answer as Promise<T>;
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
