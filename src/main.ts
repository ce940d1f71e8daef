import { loadConfigOrExit } from './config.ts';
import { createLogger } from './log.ts';
import { type RunningService, startService } from './server.ts';

const config = loadConfigOrExit();
const log = createLogger(config.LOG_LEVEL);
let service: RunningService;
try {
  service = await startService(config, log);
} catch (err) {
  // A setting that points at something unusable (REDIS_URL): one line saying which.
  log.fatal({ err }, `cannot start: ${(err as Error).message}`);
  process.exit(1);
}

service.ready.catch((err: Error) => {
  log.fatal({ err }, `cannot serve data: ${err.message}`);
  void service.close().finally(() => process.exit(1));
});

// An operator's nudge after publishing, besides the pointer watch.
process.on('SIGHUP', () => {
  void service.reload('SIGHUP').catch(() => {}); // logged by the switcher; the old release keeps serving
});

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    // A client holding a connection open must not keep the process alive forever.
    setTimeout(() => process.exit(1), 10_000).unref();
    void service.close().then(() => {
      log.info('stopped');
      process.exit(0);
    });
  });
}
