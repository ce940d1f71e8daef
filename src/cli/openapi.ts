import fs from 'node:fs/promises';
import path from 'node:path';
import { openApiText } from '../http/routes/index.ts';

// `npm run openapi`: writes the OpenAPI document the service serves to docs/openapi.json
// (test/openapi.test.ts fails until the committed copy equals it).
const out = path.resolve(import.meta.dirname, '../../docs/openapi.json');
await fs.writeFile(out, openApiText);
process.stderr.write(`written ${path.relative(process.cwd(), out)} (${openApiText.length} bytes)\n`);
