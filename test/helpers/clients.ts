import path from 'node:path';
import { SERVICE_VERSION } from '../../src/version.ts';
import { buildTypeScriptClient } from '../../tools/clients/typescript.ts';
import { tempDir } from './service.ts';

// A CLIENTS_DIR holding what `npm run build` writes for the TypeScript client (the
// Python and R clients left unbuilt), built once per process: tests serve it from there.

let built: Promise<{ dir: string; tarball: string }> | undefined;

export function builtClients(): Promise<{ dir: string; tarball: string }> {
  built ??= (async () => {
    const dir = await tempDir('dqs-clients-');
    const tarball = await buildTypeScriptClient(SERVICE_VERSION, path.join(dir, 'typescript'));
    return { dir, tarball };
  })();
  return built;
}
