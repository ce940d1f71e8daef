import { clientInstalls } from '../../clients.ts';
import type { Endpoint } from '../views.ts';
import { type OperationParameter, shapeOf } from './api.ts';

// The view's request as code, each returning the rows the page shows. The key is never
// written into a snippet: each reads DQS_API_KEY from the environment (the query CLI's
// variable), so a snippet pasted into a notebook, a script or shell history holds no
// secret. CSV snippets (pandas, R) ask the same query with format=csv.

export type SnippetKind = 'curl' | 'pandas' | 'R' | 'TypeScript' | 'CLI';
export const SNIPPET_KINDS: readonly SnippetKind[] = ['curl', 'pandas', 'R', 'TypeScript', 'CLI'];

export interface SnippetInput {
  readonly origin: string;
  readonly endpoint: Endpoint;
  readonly params: URLSearchParams;
  /** Columns of the answer, so R reads a text column as text. */
  readonly columns: readonly string[];
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
      return [
        'import os',
        '',
        'import pandas as pd',
        '',
        `url = ${quoteStr(csvUrl(s))}`,
        'df = pd.read_csv(url, storage_options={"x-api-key": os.environ["DQS_API_KEY"]}, keep_default_na=False)',
        'print(df)',
      ].join('\n');
    case 'R': {
      const texts = s.columns.filter((c) => c === 'state');
      const classes = texts.length ? `, colClasses = c(${texts.map((c) => `${c} = "character"`).join(', ')})` : '';
      return [
        'key <- c("x-api-key" = Sys.getenv("DQS_API_KEY"))',
        `df <- read.csv(url(${quoteStr(csvUrl(s))}, headers = key), na.strings = character(0)${classes})`,
        'print(df)',
      ].join('\n');
    }
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

/** A cursor pages only the format it came with, so the CSV snippets ask the first page of the view's query. */
const csvUrl = (s: SnippetInput) => {
  const query = new URLSearchParams(s.params);
  query.delete('cursor');
  query.set('format', 'csv');
  return `${s.origin}/v1/${s.endpoint}?${query}`;
};

const DATASET_PARAMS = new Set(['metric', 'dataset']);
const WALK = new Set(['limit', 'cursor', 'release', 'as_of']);

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
