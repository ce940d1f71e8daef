// Progressive enhancement: the page works without JavaScript (the key can be
// selected and copied by hand); with it, one button copies the key.
for (const button of document.querySelectorAll('button[data-copy]')) {
  const field = document.getElementById(button.dataset.copy);
  const status = document.getElementById(`${button.dataset.copy}-status`);
  button.hidden = false;
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(field.value);
      status.textContent = 'Copied to the clipboard.';
    } catch {
      field.select();
      status.textContent = 'Press Ctrl+C (or ⌘C) to copy the selected key.';
    }
  });
}
for (const field of document.querySelectorAll('input[readonly]')) field.addEventListener('focus', () => field.select());
