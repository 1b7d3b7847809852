// Copy buttons for the directory's snippets. The page works without this script:
// the buttons stay hidden and the snippets can be selected by hand.
const live = document.createElement('p');
live.className = 'visually-hidden';
live.setAttribute('role', 'status');
document.body.append(live);

async function copy(button) {
  const code = document.getElementById(button.dataset.copy);
  if (!code) return;
  try {
    await navigator.clipboard.writeText(code.textContent);
    button.textContent = 'Copied';
    live.textContent = 'Snippet copied to the clipboard.';
  } catch {
    // No clipboard permission: select the text so Ctrl+C / Cmd+C copies it.
    const range = document.createRange();
    range.selectNodeContents(code);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    button.textContent = 'Selected';
    live.textContent = 'Snippet selected: press Ctrl+C to copy.';
  }
  setTimeout(() => {
    button.textContent = 'Copy';
  }, 2000);
}

for (const button of document.querySelectorAll('button.copy[data-copy]')) {
  button.hidden = false;
  button.addEventListener('click', () => copy(button));
}
