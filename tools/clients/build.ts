import fs from 'node:fs/promises';
import path from 'node:path';
import { SERVICE_VERSION } from '../../src/version.ts';
import { buildTypeScriptClient } from './typescript.ts';

// `npm run build`'s step for the client packages the service serves at /clients/<lang>/
// (src/http/routes/clients.ts): each built, at the service's version, into
// dist/clients/<lang>/, emptied first so only the current version is there.

/** A client's builder: writes its package for `version` into `outDir`, returns the file's path. */
type Builder = (version: string, outDir: string) => Promise<string>;

const BUILDERS: Readonly<Record<string, Builder>> = {
  typescript: buildTypeScriptClient,
};

const out = path.resolve(import.meta.dirname, '../../dist/clients');
for (const [language, builder] of Object.entries(BUILDERS)) {
  const dir = path.join(out, language);
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(dir, { recursive: true });
  const file = await builder(SERVICE_VERSION, dir);
  process.stdout.write(`clients: ${path.relative(out, file)} ${(await fs.stat(file)).size} B\n`);
}
