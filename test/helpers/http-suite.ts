import fs from 'node:fs';
import path from 'node:path';

// Prints the uvu pattern of the test files that start the service in process (they
// call startTestService): `npm test` runs them a second time with
// DQS_TEST_BELOW_KOA=off (helpers/service.ts).

const dir = path.resolve(import.meta.dirname, '..');
const files = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.test.ts') && /startTestService\(/.test(fs.readFileSync(path.join(dir, f), 'utf8')));
process.stdout.write(`^(${files.map((f) => f.replace(/\./g, '\\.')).join('|')})$`);
