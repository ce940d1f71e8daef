// A few DOM helpers: the page is plain DOM modules, with no framework to ship.

type Attrs = Record<string, string | number | boolean | undefined>;
type Child = Node | string | null | undefined | false;

/** An element with attributes (`on*` skipped: listeners are added with addEventListener) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) el.append(child);
  return el;
}

/**
 * Says what a click did (copied, saved): in `where`, a live region beside the action
 * (a status far up the page is off-screen by the time the action is reached), else the
 * page's own.
 */
export function announce(text: string, where?: HTMLElement): void {
  const status = where ?? document.getElementById('status');
  if (status) status.textContent = text;
}

/** A live region to announce into, placed beside the actions it speaks for. */
export const statusLine = () => h('p', { class: 'status muted', role: 'status', 'aria-live': 'polite' });

/** Back to the key input, saying why: what a 401 answers. */
export function askForKey(message: string): void {
  announce(message);
  const input = document.getElementById('api-key');
  input?.setAttribute('aria-invalid', 'true');
  input?.focus();
}
