import { clientInstalls } from '../../clients.ts';
import type { Endpoint } from '../views.ts';
import { type OperationParameter, shapeOf } from './api.ts';

// The view's request as code, each returning the rows the page shows. The key is never
// written into a snippet: each reads DQS_API_KEY from the environment (the query CLI's
// variable), so a snippet pasted into a notebook, a script or shell history holds no
// secret. The pandas and R snippets call the clients the server serves (src/clients.ts).

export type SnippetKind = 'curl' | 'pandas' | 'R' | 'TypeScript' | 'CLI';
export const SNIPPET_KINDS: readonly SnippetKind[] = ['curl', 'pandas', 'R', 'TypeScript', 'CLI'];

export interface SnippetInput {
  readonly origin: string;
  /** The service's info.version: the clients' version, in their install lines. */
  readonly version: string;
  readonly endpoint: Endpoint;
  readonly params: URLSearchParams;
  /** The endpoint's parameters in /openapi.json: which repeat, which are numbers or flags, and the page size when `limit` is absent. */
  readonly parameters: readonly OperationParameter[];
}

const url = (s: SnippetInput, extra: Record<string, string> = {}) => {
  const query = new URLSearchParams(s.params);
  for (const [k, v] of Object.entries(extra)) query.set(k, v);
  return `${s.origin}/v1/${s.endpoint}?${query}`;
};
const quoteSh = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
const quoteStr = (text: string) => JSON.stringify(text);

export function snippet(kind: SnippetKind, s: SnippetInput): string {
  switch (kind) {
    case 'curl':
      return `curl -s ${quoteSh(url(s))} -H "x-api-key: $DQS_API_KEY"`;
    case 'pandas':
      return clientSnippet(s, 'python');
    case 'R':
      return clientSnippet(s, 'r');
    case 'TypeScript':
      return typescript(s);
    case 'CLI':
      return cli(s);
  }
}

/** The lines installing each client package from the server at `origin` (src/clients.ts), one a line. */
export const installLines = (origin: string, version: string): string =>
  Object.values(clientInstalls(origin, version))
    .map(({ install }) => install)
    .join('\n');

const DATASET_PARAMS = new Set(['metric', 'dataset']);
const WALK = new Set(['limit', 'cursor', 'release', 'as_of']);
/** Endpoints that answer pages in every format: the view shows the first `limit` rows of the whole answer. */
const PAGED = new Set<Endpoint>(['financials', 'reference']);

/**
 * The view's query as one call of the Python or R client, after the line installing it
 * from this server: every parameter a keyword but the cursor and `limit`, since the
 * client walks every page; a view of one page keeps that page's rows with `head`.
 */
function clientSnippet(s: SnippetInput, language: 'python' | 'r'): string {
  const p = s.params;
  const name = p.get(s.endpoint === 'reference' ? 'dataset' : 'metric') ?? '';
  const python = language === 'python';
  const args = [quoteStr(name)];
  for (const k of new Set(p.keys())) {
    if (DATASET_PARAMS.has(k) || k === 'limit' || k === 'cursor' || k === 'format') continue;
    const shape = shapeOf(s.parameters.find((parameter) => parameter.name === k));
    // Typed as the document types it, as in the TypeScript snippet: numbers and flags unquoted.
    const flag = (v: string) => (python ? (v === 'true' ? 'True' : 'False') : v === 'true' ? 'TRUE' : 'FALSE');
    const values = p
      .getAll(k)
      .flatMap(shape.split)
      .map((v) => (shape.integer && /^-?\d+$/.test(v) ? v : shape.flag ? flag(v) : quoteStr(v)));
    // Python's client reads a trailing underscore as freeing a keyword (from_ sends from).
    const keyword = python && k === 'from' ? 'from_' : k;
    const value = values.length === 1 ? values[0] : python ? `[${values.join(', ')}]` : `c(${values.join(', ')})`;
    args.push(`${keyword}${python ? '=' : ' = '}${value}`);
  }
  const limit = p.get('limit') ?? (PAGED.has(s.endpoint) ? String(defaultLimit(s)) : undefined);
  const install = clientInstalls(s.origin, s.version)[language].install;
  if (python) {
    return [
      `# ${install}`,
      'from dqs_client import Client',
      '',
      `df = Client(base_url=${quoteStr(s.origin)}).${s.endpoint}(${args.join(', ')})${limit ? `.head(${limit})` : ''}`,
      'print(df)',
    ].join('\n');
  }
  const call = `dqs::client(base_url = ${quoteStr(s.origin)})$${s.endpoint}(${args.join(', ')})`;
  return [`# ${install}`, `df <- ${limit ? `head(${call}, ${limit})` : call}`, 'print(df)'].join('\n');
}

/** The endpoint's own page size when `limit` is absent (the client and CLI default to another). */
const defaultLimit = (s: SnippetInput) => Number(s.parameters.find((p) => p.name === 'limit')?.schema?.default ?? 100);

function typescript(s: SnippetInput): string {
  const p = s.params;
  const name = p.get(s.endpoint === 'reference' ? 'dataset' : 'metric') ?? '';
  const query: Record<string, unknown> = {};
  const keys = [...new Set(p.keys())].filter((k) => !DATASET_PARAMS.has(k) && !WALK.has(k) && k !== 'format');
  for (const k of keys) {
    // Typed as the document types it: repeated parameters as lists (a comma-separated group_by split), numbers and flags as such.
    const shape = shapeOf(s.parameters.find((parameter) => parameter.name === k));
    const values = p.getAll(k).flatMap(shape.split);
    const typed = values.map((v) => (shape.integer ? Number(v) : shape.flag ? v === 'true' : v));
    query[k] = shape.repeats ? typed : typed[0];
  }
  const walk: Record<string, unknown> = { maxPages: 1, limit: Number(p.get('limit') ?? defaultLimit(s)) };
  if (p.get('cursor')) walk.cursor = p.get('cursor');
  if (p.get('release') && s.endpoint !== 'revisions') walk.release = p.get('release');
  // The client names the instant of as_of `asOf`, beside `release`, among a call's options.
  if (p.get('as_of')) walk.asOf = p.get('as_of');
  const q = JSON.stringify(query);
  const w = JSON.stringify(walk);
  const call = {
    financials: `api.financialPages(${quoteStr(name)}, ${q}, ${w})`,
    aggregate: `api.aggregatePages(${quoteStr(name)}, ${q}, 'json', ${w})`,
    revisions: `api.revisionPages(${quoteStr(name)}, ${q}, 'json', ${w})`,
    history: `api.historyPages(${quoteStr(name)}, ${q}, 'json', ${w})`,
  };
  const print =
    s.endpoint === 'reference'
      ? `const rows = [];\nfor await (const row of api.reference(${quoteStr(name)}, ${w})) rows.push(row);\nconsole.log(JSON.stringify(rows));`
      : `for await (const page of ${call[s.endpoint as keyof typeof call]}) console.log(JSON.stringify(page.body.data));`;
  return [
    "import { DataQueryClient } from 'data-query-client';",
    '',
    `const api = new DataQueryClient({ baseUrl: ${quoteStr(s.origin)}, apiKey: process.env.DQS_API_KEY! });`,
    print,
  ].join('\n');
}

function cli(s: SnippetInput): string {
  if (s.endpoint === 'reference') return '# The query CLI has no reference command: use the curl or TypeScript snippet.';
  const p = s.params;
  const words = ['npm', 'run', '--silent', 'query', '--'];
  if (s.endpoint !== 'financials') words.push(s.endpoint);
  words.push(quoteSh(p.get('metric') ?? ''));
  for (const k of new Set(p.keys())) {
    if (k === 'metric' || k === 'format') continue;
    // The CLI's flag for each parameter is its name with dashes (src/cli/option-flags.ts); a flag is a switch.
    const flag = `--${k.replaceAll('_', '-')}`;
    const shape = shapeOf(s.parameters.find((parameter) => parameter.name === k));
    if (shape.flag) {
      if (p.get(k) === 'true') words.push(flag);
      continue;
    }
    for (const v of p.getAll(k).flatMap(shape.split)) words.push(flag, quoteSh(v));
  }
  if (!p.has('limit')) words.push('--limit', String(defaultLimit(s)));
  words.push('--format', 'csv');
  return `DQS_URL=${quoteSh(s.origin)} ${words.join(' ')}`;
}
