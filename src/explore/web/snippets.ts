import type { Endpoint } from './url-state.ts';

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
  /** Dimensions that are integers (year). */
  readonly integers: ReadonlySet<string>;
  /** The endpoint's own page size when `limit` is absent (from /openapi.json): the client and CLI default to another. */
  readonly defaultLimit: number;
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

/** A cursor pages only the format it came with, so the CSV snippets ask the first page of the view's query. */
const csvUrl = (s: SnippetInput) => {
  const query = new URLSearchParams(s.params);
  query.delete('cursor');
  query.set('format', 'csv');
  return `${s.origin}/v1/${s.endpoint}?${query}`;
};

const DATASET_PARAMS = new Set(['metric', 'dataset']);
const SINGLE = new Set(['compare', 'share', 'per', 'order', 'period', 'from', 'to', 'cagr', 'shape']);
const NUMBERS = new Set(['index', 'latest']);
const WALK = new Set(['limit', 'cursor', 'release']);

function typescript(s: SnippetInput): string {
  const p = s.params;
  const name = p.get(s.endpoint === 'reference' ? 'dataset' : 'metric') ?? '';
  const query: Record<string, unknown> = {};
  const keys = [...new Set(p.keys())].filter((k) => !DATASET_PARAMS.has(k) && !WALK.has(k) && k !== 'format');
  for (const k of keys) {
    const values = p.getAll(k).flatMap((v) => (k === 'group_by' ? v.split(',') : [v]));
    const typed = values.map((v) => (s.integers.has(k) ? Number(v) : v));
    // The client types these as one value each; index and latest as numbers (a year, a count).
    query[k] = k === 'rollup' ? values[0] === 'true' : NUMBERS.has(k) ? Number(values[0]) : SINGLE.has(k) ? typed[0] : typed;
  }
  const walk: Record<string, unknown> = { maxPages: 1, limit: Number(p.get('limit') ?? s.defaultLimit) };
  if (p.get('cursor')) walk.cursor = p.get('cursor');
  if (p.get('release') && s.endpoint !== 'revisions') walk.release = p.get('release');
  const q = JSON.stringify(query);
  const w = JSON.stringify(walk);
  const call = {
    financials: `api.financialPages(${quoteStr(name)}, ${q}, ${w})`,
    aggregate: `api.aggregatePages(${quoteStr(name)}, ${q}, 'json', ${w})`,
    revisions: `api.revisionPages(${quoteStr(name)}, ${q}, 'json', ${w})`,
  };
  const print =
    s.endpoint === 'reference'
      ? `const rows = [];\nfor await (const row of api.reference(${quoteStr(name)}, ${w})) rows.push(row);\nconsole.log(JSON.stringify(rows));`
      : `for await (const page of ${call[s.endpoint as keyof typeof call]}) console.log(JSON.stringify(page.body.data));`;
  return [
    "import { DataQueryClient } from 'data-query-service/client';",
    '',
    `const api = new DataQueryClient({ baseUrl: ${quoteStr(s.origin)}, apiKey: process.env.DQS_API_KEY! });`,
    print,
  ].join('\n');
}

const FLAGS: Record<string, string> = { group_by: 'group-by' };

function cli(s: SnippetInput): string {
  if (s.endpoint === 'reference') return '# The query CLI has no reference command: use the curl or TypeScript snippet.';
  const p = s.params;
  const words = ['npm', 'run', '--silent', 'query', '--'];
  if (s.endpoint !== 'financials') words.push(s.endpoint);
  words.push(quoteSh(p.get('metric') ?? ''));
  for (const k of new Set(p.keys())) {
    if (k === 'metric' || k === 'format') continue;
    const flag = `--${FLAGS[k] ?? k.replaceAll('_', '-')}`;
    if (k === 'rollup') {
      if (p.get(k) === 'true') words.push(flag);
      continue;
    }
    for (const v of p.getAll(k).flatMap((x) => (k === 'group_by' ? x.split(',') : [x]))) words.push(flag, quoteSh(v));
  }
  if (!p.has('limit')) words.push('--limit', String(s.defaultLimit));
  words.push('--format', 'csv');
  return `DQS_URL=${quoteSh(s.origin)} ${words.join(' ')}`;
}
