/**
 * The dashboard's one script, served by the worker at /assets/app.js. Pages are rendered on the server;
 * this only sends their forms and buttons to the JSON API under /api and shows what comes back:
 *   <form data-api="/api/..." data-then="reload|go:/path|secret|redirect|oauth-redirect">   submits the fields as JSON
 *     (the pressed submit button's name and value included; inputs marked data-list are sent as arrays,
 *     inputs marked data-number as numbers and data-json as the JSON value typed in, both left out when
 *     empty; redirect goes to the answer's https url, oauth-redirect to its redirectTo, rows shows a
 *     query's answer in the form's [data-query-result])
 *   <button data-api="/api/..." data-confirm="..." data-then="...">  posts, after a confirmation if asked
 *   <button data-copy="#id">                                         copies the target's text
 *   <select data-navigate>                                           goes to the chosen option's value
 *   <input data-filter="#scope">   shows only the scope's [data-filter-item]s holding every word typed (with their
 *     [data-filter-group]'s own words), hides groups left empty and opens the <details> of those with a match;
 *     [data-filter-status="tool"] beside it counts the matches, [data-filter-empty] says when there is none
 *   <fieldset data-choice-group>   its [data-choose-all] box checks or clears the group's other boxes (those the
 *     filter shows), and is checked, clear or mixed as they are; [data-chosen-count] says how many are checked
 *   <div data-reload-soon>         the page loads itself again a second later, once (figures still on their way)
 */
export const SCRIPT = `
(() => {
  'use strict';
  const $ = (selector, root = document) => root.querySelector(selector);

  async function send(url, method, body) {
    const response = await fetch(url, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let payload;
    try { payload = await response.json(); } catch { payload = { success: false, error: { message: 'The server answered ' + response.status + '.' } }; }
    if (!payload.success) {
      if (response.status === 401 && !url.startsWith('/api/auth/')) location.assign('/signin?next=' + encodeURIComponent(location.pathname));
      const error = new Error(payload.error && payload.error.message || 'Something went wrong.');
      error.details = payload.error && payload.error.details || [];
      throw error;
    }
    return payload.data;
  }

  function then(action, data, source) {
    if (!action || action === 'reload') return location.reload();
    if (action.startsWith('go:')) return location.assign(safeNext() || action.slice(3));
    if (action === 'secret') return showSecret(data, source);
    // Off to a page the API named (a payment page), never to one the page itself made up.
    if (action === 'redirect' && typeof data.url === 'string' && data.url.startsWith('https://')) return location.assign(data.url);
    // Back to the OAuth client that asked, at the redirect URI the authorization server validated.
    if (action === 'oauth-redirect') return location.assign(data.redirectTo);
    if (action === 'reveal-inline') return revealInline(data, source);
    if (action === 'rows') return showRows(data, source);
  }

  /** A query's answer as a table, built node by node: every value is text, never markup. */
  function showRows(data, source) {
    const slot = $('[data-query-result]', source);
    const summary = document.createElement('p');
    summary.className = 'muted small';
    summary.textContent = data.rows.length + (data.rows.length === 1 ? ' row' : ' rows') + ' · ' + data.rowsRead + ' read · ' + data.rowsWritten + ' written · ' + data.durationMs + ' ms';
    if (data.columns.length === 0) return slot.replaceChildren(summary);
    const table = document.createElement('table');
    const head = table.createTHead().insertRow();
    for (const column of data.columns) {
      const cell = document.createElement('th');
      cell.scope = 'col';
      cell.textContent = column;
      head.append(cell);
    }
    const body = table.createTBody();
    for (const row of data.rows) {
      const line = body.insertRow();
      for (const value of row) {
        const cell = line.insertCell();
        if (value === null) cell.className = 'null';
        cell.textContent = value === null ? 'NULL' : typeof value === 'object' ? 'blob (base64) ' + value.base64 : String(value);
      }
    }
    const wrap = document.createElement('div');
    wrap.className = 'table-wrap';
    wrap.append(table);
    slot.replaceChildren(summary, wrap);
  }

  /** Where to go after signing in: only a path of this site, never another origin. */
  function safeNext() {
    const next = new URL(location.href).searchParams.get('next');
    return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\\\') ? next : null;
  }

  function showSecret(data, source) {
    const dialog = $('#secret-dialog');
    $('[data-secret-title]', dialog).textContent = source.dataset.secretTitle || 'Your new secret';
    $('[data-secret-note]', dialog).textContent = source.dataset.secretNote || '';
    $('#secret-value', dialog).textContent = data[source.dataset.secretField || 'key'];
    dialog.addEventListener('close', () => location.reload(), { once: true });
    dialog.showModal();
    $('[data-copy]', dialog).focus();
  }

  function revealInline(data, source) {
    const cell = source.closest('tr').querySelector('[data-key-cell]');
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
  }

  function confirmFirst(message, confirmLabel) {
    const dialog = $('#confirm-dialog');
    if (!message || !dialog) return Promise.resolve(true);
    $('[data-confirm-text]', dialog).textContent = message;
    $('[data-confirm-yes]', dialog).textContent = confirmLabel || 'Confirm';
    dialog.returnValue = '';
    dialog.showModal();
    return new Promise((resolve) => dialog.addEventListener('close', () => resolve(dialog.returnValue === 'yes'), { once: true }));
  }

  function clearErrors(form) {
    for (const input of form.querySelectorAll('[aria-invalid]')) input.removeAttribute('aria-invalid');
    for (const slot of form.querySelectorAll('[data-field-error]')) slot.textContent = '';
    const summary = $('.form-error', form);
    if (summary) summary.textContent = '';
  }

  function showErrors(form, error) {
    let placed = false;
    for (const detail of error.details) {
      const named = form.elements.namedItem(detail.field);
      // A group of checkboxes sharing a name: marked and focused at its first box.
      const input = named instanceof RadioNodeList ? named[0] : named;
      const slot = $('[data-field-error="' + detail.field + '"]', form);
      if (input && slot) {
        input.setAttribute('aria-invalid', 'true');
        slot.textContent = detail.message;
        if (!placed) input.focus();
        placed = true;
      }
    }
    const summary = $('.form-error', form);
    if (summary) summary.textContent = placed && error.details.length ? 'Check the fields marked below.' : error.message;
  }

  document.addEventListener('submit', async (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.api) return;
    event.preventDefault();
    clearErrors(form);
    const button = form.querySelector('[type="submit"]');
    const fields = new FormData(form, event.submitter);
    const body = Object.fromEntries(fields);
    for (const input of form.querySelectorAll('[data-list]')) body[input.name] = fields.getAll(input.name);
    for (const input of form.querySelectorAll('[data-number]')) {
      if (input.value === '') delete body[input.name];
      else body[input.name] = Number(input.value);
    }
    for (const input of form.querySelectorAll('[data-json]')) {
      const text = input.value.trim();
      if (text === '') { delete body[input.name]; continue; }
      try {
        body[input.name] = JSON.parse(text);
      } catch {
        return showErrors(form, { message: 'Check the fields marked below.', details: [{ field: input.name, message: 'Not valid JSON.' }] });
      }
    }
    if (button) button.disabled = true;
    try {
      then(form.dataset.then, await send(form.dataset.api, form.dataset.method || 'POST', body), form);
    } catch (error) {
      showErrors(form, error);
    } finally {
      if (button) button.disabled = false;
    }
  });

  document.addEventListener('click', async (event) => {
    const target = event.target instanceof Element ? event.target.closest('button') : null;
    if (!target) return;
    if (target.dataset.copy) {
      const source = $(target.dataset.copy);
      const text = source ? (source.value !== undefined ? source.value : source.textContent) : '';
      try {
        await navigator.clipboard.writeText(text);
        const label = target.textContent;
        target.textContent = 'Copied';
        setTimeout(() => { target.textContent = label; }, 1500);
      } catch {
        const range = document.createRange();
        range.selectNodeContents(source);
        getSelection().removeAllRanges();
        getSelection().addRange(range);
      }
      return;
    }
    if (!target.dataset.api) return;
    if (!(await confirmFirst(target.dataset.confirm, target.dataset.confirmLabel))) return;
    target.disabled = true;
    try {
      const body = target.dataset.body ? JSON.parse(target.dataset.body) : undefined;
      then(target.dataset.then, await send(target.dataset.api, target.dataset.method || 'POST', body), target);
    } catch (error) {
      target.disabled = false;
      const status = $('#page-status');
      if (status) status.textContent = error.message;
      else alert(error.message);
    }
  });

  document.addEventListener('change', (event) => {
    const select = event.target;
    if (select instanceof HTMLSelectElement && 'navigate' in select.dataset) location.assign(select.value);
    const box = event.target;
    if (!(box instanceof HTMLInputElement) || box.type !== 'checkbox') return;
    const group = box.closest('[data-choice-group]');
    if (!group) return;
    if ('chooseAll' in box.dataset) for (const choice of choicesOf(group)) if (!choice.closest('[hidden]')) choice.checked = box.checked;
    showChoices(group);
  });

  function choicesOf(group) {
    return [...group.querySelectorAll('input[type="checkbox"]:not([data-choose-all])')];
  }

  function showChoices(group) {
    const choices = choicesOf(group);
    const checked = choices.filter((choice) => choice.checked).length;
    const all = $('[data-choose-all]', group);
    if (all) {
      all.checked = checked > 0 && checked === choices.length;
      all.indeterminate = checked > 0 && checked < choices.length;
    }
    const count = $('[data-chosen-count]', group);
    if (count) count.textContent = checked + ' of ' + choices.length + ' chosen';
  }

  document.addEventListener('input', (event) => {
    const input = event.target;
    if (input instanceof HTMLInputElement && input.dataset.filter) filter(input);
  });

  function filter(input) {
    const scope = $(input.dataset.filter);
    if (!scope) return;
    const words = input.value.toLowerCase().split(/\\s+/).filter(Boolean);
    let shown = 0;
    for (const group of scope.querySelectorAll('[data-filter-group]')) {
      const groupWords = group.dataset.filterGroup.toLowerCase();
      let matches = 0;
      for (const item of group.querySelectorAll('[data-filter-item]')) {
        const text = groupWords + ' ' + item.textContent.toLowerCase();
        item.hidden = !words.every((word) => text.includes(word));
        if (!item.hidden) matches++;
      }
      group.hidden = matches === 0;
      shown += matches;
      const details = $('details', group);
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
    const empty = $('[data-filter-empty]', scope.parentElement);
    if (empty) empty.hidden = shown > 0;
    const status = $('[data-filter-status]', input.parentElement);
    if (!status) return;
    if (!('unfiltered' in status.dataset)) status.dataset.unfiltered = status.textContent;
    const noun = status.dataset.filterStatus;
    status.textContent = words.length === 0 ? status.dataset.unfiltered : shown + ' ' + noun + (shown === 1 ? ' matches.' : 's match.');
  }

  const reloadSoon = $('[data-reload-soon]');
  // Once only: a page loaded by that reload (or by the person's own) waits for them to reload again.
  const navigation = performance.getEntriesByType('navigation')[0];
  if (reloadSoon && !(navigation && navigation.type === 'reload')) setTimeout(() => location.reload(), 1000);
})();
`;
