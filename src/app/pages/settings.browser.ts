// Settings in the browser: the two-factor card's setup (the QR code and key the API answered, then the code that turns
// it on) and its recovery codes, shown once in place until the person says they have saved them.
import { $, onAnswer } from '../browser/dashboard';

onAnswer<{ secret: string; qrSvg: string }>('two-factor-setup', ({ secret, qrSvg }, form) => {
  const card = form.closest<HTMLElement>('[data-two-factor]')!;
  const setup = $<HTMLElement>('[data-two-factor-setup]', card)!;
  // The API's SVG, parsed as SVG (never as HTML), so nothing in it runs.
  const svg = new DOMParser().parseFromString(qrSvg, 'image/svg+xml').documentElement;
  $('[data-qr]', setup)!.replaceChildren(document.importNode(svg, true));
  $('[data-secret-key]', setup)!.textContent = secret.replace(/(.{4})/g, '$1 ').trim();
  form.hidden = true;
  setup.hidden = false;
  $<HTMLInputElement>('input[name="code"]', setup)!.focus();
});

onAnswer<{ recoveryCodes: string[] }>('two-factor-codes', ({ recoveryCodes }, form) => {
  const card = form.closest<HTMLElement>('[data-two-factor]')!;
  for (const part of card.querySelectorAll<HTMLElement>(':scope > :not(h2):not([data-recovery-codes])')) part.hidden = true;
  const shown = $<HTMLElement>('[data-recovery-codes]', card)!;
  $('#recovery-codes', shown)!.textContent = recoveryCodes.join('\n');
  shown.hidden = false;
  $<HTMLButtonElement>('[data-two-factor-done]', shown)!.focus();
});

document.addEventListener('click', (event) => {
  if (event.target instanceof Element && event.target.closest('[data-two-factor-done]')) location.reload();
});
