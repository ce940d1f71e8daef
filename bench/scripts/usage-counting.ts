import path from 'node:path';
import { parseArgs } from 'node:util';
import { type ServiceProcess, startServer } from '../../tools/service-process.ts';
import { line, progress, usageCost } from '../runner/report.ts';
import { USAGE_SERVERS, type UsageServers, usageFigures } from '../scenarios/usage-counting.ts';

// `npx tsx bench/scripts/usage-counting.ts [--rounds N] [--seconds S] [--connections 1,16]`:
// the "Usage counting" figures of `npm run bench` alone (bench/scenarios/usage-counting.ts),
// in as many and as long rounds as asked. Reads the 1x release `npm run bench` generated.

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const WORK = path.join(ROOT, 'tmp', 'bench');
const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '1,16' },
  },
});

const servers: Partial<UsageServers> = {};
try {
  for (const [name, env] of Object.entries(USAGE_SERVERS)) {
    progress(`starting the ${name} server`);
    servers[name as keyof UsageServers] = await startServer(
      { DATA_DIR: path.join(WORK, 'data'), STATE_DIR: path.join(WORK, `state-usage-${name}`), ...env },
      path.join(WORK, 'logs', `usage-${name}.log`),
    );
  }
  const timing = { rounds: Number(args.rounds), seconds: Number(args.seconds), warmup: 500 };
  const connections = args.connections.split(',').map(Number);
  for (const f of await usageFigures(servers as UsageServers, timing, connections, (text) => progress(text, false))) line(usageCost(f));
} finally {
  await Promise.all(Object.values(servers).map((s: ServiceProcess) => s.stop()));
}
