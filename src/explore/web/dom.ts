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

/** The page's live region for what a click did (copied, downloaded). */
export function announce(text: string): void {
  const status = document.getElementById('status');
  if (status) status.textContent = text;
}

/** Back to the key input, saying why: what a 401 answers. */
export function askForKey(message: string): void {
  announce(message);
  const input = document.getElementById('api-key');
  input?.setAttribute('aria-invalid', 'true');
  input?.focus();
}
