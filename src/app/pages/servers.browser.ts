/**
 * The MCP servers page in the browser: the tool picker.
 *   <input data-filter="#scope">   shows only the scope's [data-filter-item]s holding every word typed (with their
 *     [data-filter-group]'s own words), hides groups left empty and opens the <details> of those with a match;
 *     [data-filter-status="tool"] beside it counts the matches, [data-filter-empty] says when there is none
 *   <fieldset data-choice-group>   its [data-choose-all] box checks or clears the group's other boxes (those the
 *     filter shows), and is checked, clear or mixed as they are; [data-chosen-count] says how many are checked
 */
import { $ } from '../browser/dashboard';

document.addEventListener('change', (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement) || box.type !== 'checkbox') return;
  const group = box.closest<HTMLElement>('[data-choice-group]');
  if (!group) return;
  if ('chooseAll' in box.dataset) for (const choice of choicesOf(group)) if (!choice.closest('[hidden]')) choice.checked = box.checked;
  showChoices(group);
});

function choicesOf(group: HTMLElement): HTMLInputElement[] {
  return [...group.querySelectorAll<HTMLInputElement>('input[type="checkbox"]:not([data-choose-all])')];
}

function showChoices(group: HTMLElement): void {
  const choices = choicesOf(group);
  const checked = choices.filter((choice) => choice.checked).length;
  const all = $<HTMLInputElement>('[data-choose-all]', group);
  if (all) {
    all.checked = checked > 0 && checked === choices.length;
    all.indeterminate = checked > 0 && checked < choices.length;
  }
  const count = $('[data-chosen-count]', group);
  if (count) count.textContent = checked + ' of ' + choices.length + ' chosen';
}

document.addEventListener('input', (event) => {
  const input = event.target;
  if (input instanceof HTMLInputElement && input.dataset.filter) filter(input, input.dataset.filter);
});

function filter(input: HTMLInputElement, scopeSelector: string): void {
  const scope = $(scopeSelector);
  if (!scope) return;
  const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  for (const group of scope.querySelectorAll<HTMLElement>('[data-filter-group]')) {
    const groupWords = (group.dataset.filterGroup ?? '').toLowerCase();
    let matches = 0;
    for (const item of group.querySelectorAll<HTMLElement>('[data-filter-item]')) {
      const text = groupWords + ' ' + (item.textContent ?? '').toLowerCase();
      item.hidden = !words.every((word) => text.includes(word));
      if (!item.hidden) matches++;
    }
    group.hidden = matches === 0;
    shown += matches;
    const details = $<HTMLDetailsElement>('details', group);
    if (!details) continue;
    // Opened for a match while words are typed; as the person left it once the box is empty again.
    if (words.length > 0) {
      if (!('openBefore' in details.dataset)) details.dataset.openBefore = String(details.open);
      details.open = matches > 0;
    } else if ('openBefore' in details.dataset) {
      details.open = details.dataset.openBefore === 'true';
      delete details.dataset.openBefore;
    }
  }
  const empty = scope.parentElement && $('[data-filter-empty]', scope.parentElement);
  if (empty) empty.hidden = shown > 0;
  const status = input.parentElement && $('[data-filter-status]', input.parentElement);
  if (!status) return;
  if (!('unfiltered' in status.dataset)) status.dataset.unfiltered = status.textContent ?? '';
  const noun = status.dataset.filterStatus;
  status.textContent = words.length === 0 ? (status.dataset.unfiltered ?? '') : shown + ' ' + noun + (shown === 1 ? ' matches.' : 's match.');
}
