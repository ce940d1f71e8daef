import { type ChildProcess, spawn } from 'node:child_process';

// A busy machine, made on purpose: what failed only under load (a CI runner shared with
// other jobs) is tested under load. Each busy process spins one core until it is killed,
// or for `limitMs` at most, should the test that started it die first.

/** Runs `work` while `processes` node processes each keep a core busy; they are killed, by PID, however it ends. */
export async function underCpuLoad<T>(work: () => Promise<T>, processes = 2, limitMs = 180_000): Promise<T> {
  const spin = `const end = Date.now() + ${limitMs}; while (Date.now() < end) {}`;
  const busy: ChildProcess[] = [];
  try {
    for (let i = 0; i < processes; i++) busy.push(spawn(process.execPath, ['-e', spin], { stdio: 'ignore' }));
    return await work();
  } finally {
    for (const child of busy) child.kill('SIGKILL');
  }
}
