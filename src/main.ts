import { loadConfigOrExit } from './config.ts';
import { createLogger } from './log.ts';
import { startService } from './server.ts';

const config = loadConfigOrExit();
// Every line it takes is written before the process exits, however it exits (log.ts).
const log = createLogger(config.LOG_LEVEL);

const service = await startService(config, log).catch((err: Error) => {
  // A setting that points at something unusable (REDIS_URL): one line saying which.
  log.fatal({ err }, `cannot start: ${err.message}`);
  return process.exit(1);
});

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
