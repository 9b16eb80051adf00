// A credential table in the browser (API keys, MCP tokens): a revealed secret shown in its row, with a copy button.
import { onAnswer } from '../browser/dashboard';

/** POST .../{id}/reveal's answer. */
interface RevealAnswer {
  id: string;
  key: string;
}

onAnswer<RevealAnswer>('reveal-inline', (data, source) => {
  const cell = source.closest('tr')!.querySelector('[data-key-cell]')!;
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
  cell.replaceChildren(wrap);
  source.remove();
  copy.focus();
});
