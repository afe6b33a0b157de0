// The tokens page: the new token's Copy button. The token is shown once;
// copying it whole avoids a partial selection. Without the clipboard (an
// insecure origin, a refusal) the token's text is selected for a manual copy.

document.addEventListener('click', async (event) => {
  const button = event.target.closest('[data-copy]');
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  if (!source) return;
  try {
    await navigator.clipboard.writeText(source.textContent.trim());
    button.textContent = button.dataset.copiedLabel;
  } catch {
    const range = document.createRange();
    range.selectNodeContents(source);
    window.getSelection().removeAllRanges();
    window.getSelection().addRange(range);
  }
});
