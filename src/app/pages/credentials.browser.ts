// A credential table in the browser (API keys, MCP tokens): a revealed secret shown in its row, with a copy button.
import { onAnswer } from '../browser/dashboard';

/** POST .../{id}/reveal's answer. */
interface RevealAnswer {
  id: string;
  key: string;
}

onAnswer<RevealAnswer>('reveal-inline', (data, source) => {
  const hint = source.closest('tr')!.querySelector('[data-key-hint]')!;
  const code = document.createElement('code');
  code.id = 'revealed-' + data.id;
  code.textContent = data.key;
  const copy = document.createElement('button');
  copy.type = 'button';
  copy.className = 'secondary small';
  copy.dataset.copy = '#' + code.id;
  copy.textContent = 'Copy';
  const wrap = document.createElement('span');
  wrap.className = 'secret';
  wrap.append(code, copy);
  hint.replaceWith(wrap);
  source.remove();
  copy.focus();
});
