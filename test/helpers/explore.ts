import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { SERVICE_VERSION } from '../../src/version.ts';
import { buildPythonClient } from '../../tools/clients/python.ts';
import { buildRClient } from '../../tools/clients/r.ts';
import { parseCsv } from './csv.ts';
import { tempDir } from './service.ts';

// What the Explore page's browser test reads and runs: the page's table, the rows of a
// /v1 JSON answer in the same flat columns, and the "Copy as" snippets run for real.

const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
export const PYTHON = '/usr/bin/python3'; // Debian's, with python3-pandas; the python3 on PATH may be another
export const RSCRIPT = ['/usr/bin/Rscript', '/usr/local/bin/Rscript'].find((file) => existsSync(file));

let clientsDir: Promise<string> | undefined;

/** A CLIENTS_DIR holding the Python and R clients at the service's version, built once per process, for the snippets to install from. */
export function snippetClientsDir(): Promise<string> {
  clientsDir ??= (async () => {
    const dir = await tempDir('dqs-snippet-clients-');
    await buildPythonClient(SERVICE_VERSION, path.join(dir, 'python'));
    if (RSCRIPT) await buildRClient(SERVICE_VERSION, path.join(dir, 'r'));
    return dir;
  })();
  return clientsDir;
}

const installed = new Map<string, Promise<string>>();

/**
 * Runs the install line a pandas or R snippet shows on its first line (`# pip install <url>`,
 * `# install.packages("<url>", …)`), once per URL, into a folder of its own rather than the
 * system library: the folder, for PYTHONPATH or R_LIBS.
 */
function installShown(kind: 'pandas' | 'R', code: string): Promise<string> {
  const url = /https?:\/\/[^\s"]+/.exec(code.split('\n')[0] ?? '')?.[0];
  if (!url) throw new Error(`no install line with a URL atop the ${kind} snippet: ${code.slice(0, 200)}`);
  let done = installed.get(url);
  if (!done) {
    done = (async () => {
      const dir = await tempDir('dqs-snippet-client-');
      if (kind === 'pandas')
        await exec(PYTHON, ['-m', 'pip', 'install', '--quiet', '--no-index', '--disable-pip-version-check', '--target', dir, url]);
      else
        await exec(RSCRIPT!, [
          '-e',
          `install.packages(${JSON.stringify(url)}, lib = ${JSON.stringify(dir)}, repos = NULL, type = "source")`,
        ]);
      return dir;
    })();
    installed.set(url, done);
  }
  return done;
}

export interface Grid {
  readonly columns: string[];
  readonly rows: string[][];
}

/** The answer table on screen: header texts, and each cell's raw value (a number's `data-raw`) or text; a row's controls (`.action`: its history link) are no value. */
export function tableOnPage(page: Page): Promise<Grid> {
  return page.locator('table.answer').evaluate((table) => ({
    columns: [...table.querySelectorAll('thead th:not(.action)')].map((th) => th.textContent ?? ''),
    rows: [...table.querySelectorAll('tbody tr')].map((tr) =>
      [...tr.children]
        .filter((cell) => !cell.classList.contains('action'))
        .map((cell) => (cell as HTMLElement).dataset.raw ?? cell.textContent ?? ''),
    ),
  }));
}

/** A JSON answer's rows as the page's columns: dimensions, values (or before_/after_), nulls as the page's dash. */
export function jsonGrid(data: any[]): Grid {
  const columns: string[] = [];
  const flat = data.map((row) => {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(row)) {
      // A removed row's `values` (an added row's `before`) is null: empty cells, as the page shows them.
      if (value === null && ['values', 'before', 'after'].includes(key)) continue;
      if (value && typeof value === 'object')
        for (const [k, v] of Object.entries(value)) out[key === 'dimensions' || key === 'values' ? k : `${key}_${k}`] = v;
      else out[key] = value;
    }
    for (const k of Object.keys(out)) if (!columns.includes(k)) columns.push(k);
    return out;
  });
  return { columns, rows: flat.map((r) => columns.map((c) => (r[c] === null || r[c] === undefined ? '—' : String(r[c])))) };
}

/** The same rows: equal text, numbers equal to 1e-12 of their size (R prints 15 digits), a null as "", NA or the dash. */
export function sameRows(got: Grid, want: Grid): string | undefined {
  if (got.columns.join() !== want.columns.join()) return `columns ${got.columns.join()} != ${want.columns.join()}`;
  if (got.rows.length !== want.rows.length) return `${got.rows.length} rows != ${want.rows.length}`;
  for (const [i, row] of got.rows.entries()) {
    for (const [j, cell] of row.entries()) {
      const expected = want.rows[i]![j]!;
      if (cell === expected) continue;
      const empty = (v: string) => v === '' || v === 'NA' || v === '—' || v === 'NaN';
      if (empty(cell) && empty(expected)) continue;
      const [a, b] = [Number(cell), Number(expected)];
      if (cell !== '' && Number.isFinite(a) && Number.isFinite(b) && Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b))) continue;
      return `row ${i} column ${got.columns[j]}: ${cell} != ${expected}`;
    }
  }
  return undefined;
}

const csvGrid = (text: string): Grid => {
  const [columns = [], ...rows] = parseCsv(text, { anyLineEnd: true });
  return { columns, rows };
};

const MARK = '--- rows ---';
const afterMarker = (stdout: string) => {
  const at = stdout.indexOf(`${MARK}\n`);
  if (at < 0) throw new Error(`no rows written: ${stdout.slice(0, 500)}`);
  return csvGrid(stdout.slice(at + MARK.length + 1));
};

/** Runs a snippet as shown, the key in DQS_API_KEY, and reads the rows it printed or holds. */
export async function runSnippet(kind: string, code: string, key: string): Promise<Grid> {
  const env = { ...process.env, DQS_API_KEY: key };
  const opts = { env, cwd: ROOT, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 };
  switch (kind) {
    case 'curl':
      return jsonGrid(JSON.parse((await exec('bash', ['-c', code], opts)).stdout).data);
    case 'CLI':
      return csvGrid((await exec('bash', ['-c', code], opts)).stdout);
    // pandas and R: the snippet prints `df`, then its rows are written whole, as CSV, after a marker.
    case 'pandas': {
      const withClient = { ...opts, env: { ...env, PYTHONPATH: await installShown(kind, code) } };
      return afterMarker(
        (await exec(PYTHON, ['-c', `${code}\nimport sys\nprint("${MARK}")\ndf.to_csv(sys.stdout, index=False)`], withClient)).stdout,
      );
    }
    case 'R': {
      const withClient = { ...opts, env: { ...env, R_LIBS: await installShown(kind, code) } };
      return afterMarker(
        (await exec(RSCRIPT!, ['-e', `${code}\ncat("${MARK}\\n")\nwrite.csv(df, stdout(), row.names = FALSE)`], withClient)).stdout,
      );
    }
    case 'TypeScript': {
      // Inside the repository, where `data-query-client` resolves to its source (tsconfig.json "paths").
      const file = path.join(ROOT, 'tmp', `explore-snippet-${process.pid}.ts`);
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, code);
      try {
        const out = (await exec(process.execPath, ['--import', 'tsx', file], opts)).stdout;
        return jsonGrid(
          out
            .trim()
            .split('\n')
            .flatMap((line) => JSON.parse(line)),
        );
      } finally {
        await fs.rm(file, { force: true });
      }
    }
  }
  throw new Error(`no runner for ${kind}`);
}
