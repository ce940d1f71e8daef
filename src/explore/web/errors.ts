import { ApiFailure } from './api.ts';
import { askForKey, h } from './dom.ts';

// What a refusal shows: nothing fails silently. A 400 puts the spec's error and its
// details, in words, beside the control that caused it (each control's note has the id
// `note-<parameter>`), marked invalid; a 401 goes back to the key; a 429 counts down Retry-After; a
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
  const placed = markFields(view, err);
  const unplaced = Object.entries(fieldErrors(err.details)).filter(([name]) => !placed.includes(name));
  box.replaceChildren(
    h(
      'div',
      { role: 'alert', class: 'error' },
      h('p', {}, `${err.status}: ${err.error}`),
      ...formErrors(err.details).map((text) => h('p', {}, text)),
      ...unplaced.map(([name, messages]) => h('p', {}, `${name}: ${messages.join(' ')}`)),
      err.hint && !placed.length ? h('p', {}, err.hint) : null,
      placed.length ? h('p', {}, `See the note beside ${placed.join(', ')}.`) : null,
    ),
  );
}

/**
 * Writes a 400's `details.fieldErrors` (and its `hint`, beside the first) into the note
 * of each control named, marking the control invalid; returns the names placed. The
 * note is the control's `aria-describedby`, so a screen reader reads it with the field.
 */
export function markFields(view: ParentNode, err: unknown): string[] {
  if (!(err instanceof ApiFailure) || err.status !== 400) return [];
  const placed: string[] = [];
  for (const [name, messages] of Object.entries(fieldErrors(err.details))) {
    const note = view.querySelector(`#note-${CSS.escape(name)}`);
    const field = view.querySelector(`#param-${CSS.escape(name)}`);
    if (!note || !field) continue;
    note.textContent = [...messages, placed.length === 0 && err.hint ? err.hint : ''].filter(Boolean).join(' ');
    note.classList.add('bad');
    field.setAttribute('aria-invalid', 'true');
    // A field under "More options" is shown with its error.
    field.closest('details')?.setAttribute('open', '');
    placed.push(name);
  }
  return placed;
}

/** `details.formErrors`: what a 400 says of the request as a whole. */
function formErrors(details: unknown): string[] {
  const errors = (details as { formErrors?: unknown } | undefined)?.formErrors;
  return Array.isArray(errors) ? errors.filter((e): e is string => typeof e === 'string') : [];
}

/** `details.fieldErrors`, by parameter name: what a 400 of invalid parameters carries. */
function fieldErrors(details: unknown): Record<string, string[]> {
  const fields = (details as { fieldErrors?: Record<string, string[]> } | undefined)?.fieldErrors;
  return fields && typeof fields === 'object' ? fields : {};
}
