import { ApiFailure } from './api.ts';
import { askForKey, h } from './dom.ts';

// What a refusal shows: nothing fails silently. A 400 puts the spec's error and its
// details beside the control that caused it (each control's note has the id
// `note-<parameter>`); a 401 goes back to the key; a 429 counts down Retry-After; a
// 503 says to try again.

let countdown: ReturnType<typeof setInterval> | undefined;

/** Shows `err` in `box`; a 400's notes are looked for in `view` (the view being built, not yet on screen). */
export function showError(box: HTMLElement, err: unknown, view: ParentNode = document): void {
  clearInterval(countdown);
  if (!(err instanceof ApiFailure)) {
    box.replaceChildren(h('p', { role: 'alert', class: 'error' }, `Something went wrong in the page: ${(err as Error).message}`));
    return;
  }
  if (err.status === 401) {
    box.replaceChildren(h('p', { role: 'alert', class: 'error' }, `${err.error} Type a valid API key above.`));
    askForKey(err.error);
    return;
  }
  if (err.status === 429) {
    const line = h('p', { role: 'alert', class: 'error' });
    box.replaceChildren(line);
    let left = err.retryAfter ?? 60;
    const tick = () => {
      line.textContent = `${err.error} Try again in ${left} s.`;
      if (left-- <= 0) {
        clearInterval(countdown);
        line.textContent = `${err.error} You can try again now: reload the view.`;
      }
    };
    tick();
    countdown = setInterval(tick, 1000);
    return;
  }
  if (err.status === 503) {
    const wait = err.retryAfter ? ` in ${err.retryAfter} s` : ' shortly';
    box.replaceChildren(h('p', { role: 'alert', class: 'error' }, `${err.error} The service is busy or loading: try again${wait}.`));
    return;
  }
  const fields = fieldErrors(err.details);
  const placed: string[] = [];
  for (const [name, messages] of Object.entries(fields)) {
    const note = view.querySelector(`#note-${CSS.escape(name)}`);
    if (!note) continue;
    note.textContent = messages.join(' ');
    note.classList.add('bad');
    note.closest('.control')?.querySelector('input, select')?.setAttribute('aria-invalid', 'true');
    placed.push(name);
  }
  const details = err.details === undefined ? '' : JSON.stringify(err.details);
  box.replaceChildren(
    h(
      'div',
      { role: 'alert', class: 'error' },
      h('p', {}, `${err.status}: ${err.error}`),
      err.hint ? h('p', {}, err.hint) : null,
      details ? h('pre', {}, details) : null,
      placed.length ? h('p', {}, `See the note beside: ${placed.join(', ')}.`) : null,
    ),
  );
}

/** `details.fieldErrors`, by parameter name: what a 400 of invalid parameters carries. */
function fieldErrors(details: unknown): Record<string, string[]> {
  const fields = (details as { fieldErrors?: Record<string, string[]> } | undefined)?.fieldErrors;
  return fields && typeof fields === 'object' ? fields : {};
}
