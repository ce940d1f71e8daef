// The view is drawn anew on every URL change (main.ts). The control that changed it is
// found again in the new view by what it is, not by its place: its id, or a facet chip
// by its dimension and value; a chip whose value is gone gives way to its facet's input.
// Focus goes back to it, so the keyboard stays where it was.

type Place = { readonly id: string } | { readonly facet: string; readonly value: string };

let wanted: Place | undefined;

/** Notes the view's focused control, before the view is replaced. */
export function rememberFocus(view: HTMLElement): void {
  const el = document.activeElement;
  // Nothing focused: a view still loading, whose control is still wanted.
  if (!el || el === document.body) return;
  wanted =
    !(el instanceof HTMLElement) || !view.contains(el)
      ? undefined
      : el.dataset.facet !== undefined
        ? { facet: el.dataset.facet, value: el.dataset.value ?? '' }
        : el.id
          ? { id: el.id }
          : undefined;
}

/** Focuses the noted control if it is in the document now; called when the view, and later its facets, are drawn. */
export function restoreFocus(): void {
  if (!wanted) return;
  const active = document.activeElement;
  // The analyst has moved on meanwhile.
  if (active && active !== document.body) {
    wanted = undefined;
    return;
  }
  const found =
    'id' in wanted
      ? document.getElementById(wanted.id)
      : (document.querySelector<HTMLElement>(
          `button[data-facet="${CSS.escape(wanted.facet)}"][data-value="${CSS.escape(wanted.value)}"]`,
        ) ?? (document.querySelector('fieldset.filters:not([aria-busy])') ? document.getElementById(`param-${wanted.facet}`) : null));
  if (!found) return;
  wanted = undefined;
  found.focus();
}
