import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { SERVICE_VERSION } from '../../src/version.ts';
import { buildPythonClient, PYTHON } from './python.ts';
import { buildRClient } from './r.ts';
import { buildTypeScriptClient } from './typescript.ts';

// `npm run build`'s step for the client packages the service serves at /clients/<lang>/
// (src/http/routes/clients.ts): each built, at the service's version, into
// dist/clients/<lang>/, emptied first so only the current version is there. A client
// whose toolchain this machine lacks (Python's packaging tools, R) is left unbuilt with
// a line saying what to install: `npm ci && npm start` must work without them, and its
// URL answers a 404 naming `npm run build` until it is built.

interface Client {
  /** Writes the package for `version` into `outDir`, returns the file's path. */
  readonly build: (version: string, outDir: string) => Promise<string>;
  /** A command that succeeds when the toolchain is here, and what installs it. */
  readonly needs?: { readonly command: readonly [string, ...string[]]; readonly install: string };
}

const CLIENTS: Readonly<Record<string, Client>> = {
  typescript: { build: buildTypeScriptClient },
  python: {
    build: buildPythonClient,
    needs: {
      command: [PYTHON, '-c', 'import setuptools, wheel, pip'],
      install: 'apt-get install python3-pip python3-setuptools python3-wheel',
    },
  },
  r: { build: buildRClient, needs: { command: ['R', '--version'], install: 'apt-get install r-base-core' } },
};

const present = ([command, ...args]: readonly [string, ...string[]]) =>
  promisify(execFile)(command, args).then(
    () => true,
    () => false,
  );

const out = path.resolve(import.meta.dirname, '../../dist/clients');
for (const [language, { build, needs }] of Object.entries(CLIENTS)) {
  const dir = path.join(out, language);
  await fs.rm(dir, { recursive: true, force: true });
  if (needs && !(await present(needs.command))) {
    process.stdout.write(`clients: ${language} not built: \`${needs.command.join(' ')}\` failed (${needs.install})\n`);
    continue;
  }
  await fs.mkdir(dir, { recursive: true });
  const file = await build(SERVICE_VERSION, dir);
  process.stdout.write(`clients: ${path.relative(out, file)} ${(await fs.stat(file)).size} B\n`);
}
