import cliProgress from 'cli-progress';

/** A progress bar on stderr; off a terminal it prints a line every few seconds instead. */
export function progressBar(label: string) {
  const bar = new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {percentage}% | {value}/{total} rows | {duration}s`,
      stream: process.stderr,
      noTTYOutput: true,
      notTTYSchedule: 3000,
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(done: number, total: number) {
      if (!started) {
        bar.start(total, done);
        started = true;
      } else {
        bar.setTotal(total);
        bar.update(done);
      }
    },
    stop() {
      if (started) bar.stop();
      started = false;
    },
  };
}
