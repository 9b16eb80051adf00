/**
 * The dashboard's browser code every page shares, bundled with each page's own (src/app/pages/*.browser.ts)
 * into the one script the worker serves at /assets/app.<fingerprint>.js (scripts/dashboard-script.mjs).
 * Pages are rendered on the server; this only sends their forms and buttons to the JSON API under /api and
 * shows what comes back:
 *   <form data-api="/api/..." data-then="reload|go:/path|secret|redirect|oauth-redirect|verification-sent|<a page's answer>">
 *     (whatever it names, an answer of `twoFactorRequired` goes to the sign-in page's code step)
 *     submits the fields as JSON (the pressed submit button's name and value included; inputs marked
 *     data-list are sent as arrays, inputs marked data-number as numbers and data-json as the JSON value
 *     typed in, both left out when empty; redirect goes to the answer's https url, oauth-redirect to its
 *     redirectTo; a page adds answers of its own with onAnswer), after a confirmation when it has data-confirm
 *   <button data-api="/api/..." data-confirm="..." data-then="...">  posts, after a confirmation if asked
 *   <button data-copy="#id">                                         copies the target's text
 *   <select data-navigate>                                           goes to the chosen option's value
 */

import { safeNextPath } from '../auth/next-path';

/** What the API refused, with the fields it named. */
class ApiFailure extends Error {
  constructor(
    message: string,
    readonly details: { field: string; message: string }[],
  ) {
    super(message);
  }
}

interface Envelope {
  success: boolean;
  data?: unknown;
  error?: { message?: string; details?: { field: string; message: string }[] };
}

/** Shows the API's answer (the envelope's data) to the form or button that was sent, its source. */
export type AnswerHandler<Data> = (data: Data, source: HTMLElement) => void;

const answers = new Map<string, AnswerHandler<never>>();

/**
 * What a form or button marked data-then="<name>" does with the API's answer. The answer's shape is the
 * route's, which the page naming the answer knows: it is not checked here.
 */
export function onAnswer<Data>(name: string, handler: AnswerHandler<Data>): void {
  answers.set(name, handler);
}

export function $<Found extends Element = HTMLElement>(selector: string, root: ParentNode = document): Found | null {
  return root.querySelector<Found>(selector);
}

async function send(url: string, method: string, body: unknown): Promise<unknown> {
  const response = await fetch(url, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let payload: Envelope;
  try {
    payload = (await response.json()) as Envelope;
  } catch {
    payload = { success: false, error: { message: 'The server answered ' + response.status + '.' } };
  }
  if (!payload.success) {
    if (response.status === 401 && !url.startsWith('/api/auth/')) location.assign('/signin?next=' + encodeURIComponent(location.pathname));
    throw new ApiFailure((payload.error && payload.error.message) || 'Something went wrong.', (payload.error && payload.error.details) || []);
  }
  return payload.data;
}

/** The answers every page may name; data is the answer's shape for each. */
interface BuiltInAnswers {
  secret: Record<string, string>;
  redirect: { url?: unknown };
  'oauth-redirect': { redirectTo: string };
  'verification-sent': { sentTo: string; emailed: 'provider' | 'outbox' | 'nowhere' };
}

function then(action: string | undefined, answer: unknown, source: HTMLElement): void {
  // A right password of an account with two-factor sign-in: the sign-in page asks for the code,
  // then goes where this was going.
  if ((answer as { twoFactorRequired?: unknown } | null)?.twoFactorRequired === true) {
    const next = safeNext();
    return location.assign(next ? '/signin?next=' + encodeURIComponent(next) : '/signin');
  }
  if (!action || action === 'reload') return location.reload();
  if (action.startsWith('go:')) return location.assign(safeNext() || action.slice(3));
  if (action === 'secret') return showSecret(answer as BuiltInAnswers['secret'], source);
  if (action === 'redirect') {
    const { url } = answer as BuiltInAnswers['redirect'];
    // Off to a page the API named (a payment page), never to one the page itself made up.
    if (typeof url === 'string' && url.startsWith('https://')) location.assign(url);
    return;
  }
  if (action === 'verification-sent') return showVerificationSent(answer as BuiltInAnswers['verification-sent'], source);
  // Back to the OAuth client that asked, at the redirect URI the authorization server validated.
  if (action === 'oauth-redirect') return location.assign((answer as BuiltInAnswers['oauth-redirect']).redirectTo);
  (answers.get(action) as AnswerHandler<unknown> | undefined)?.(answer, source);
}

/** The page's own ?next=, when it is a path of this site: the server's rule for sign-in, so `/<tab>/evil.example` cannot leave. */
function safeNext(): string | null {
  return safeNextPath(new URL(location.href).searchParams.get('next'));
}

/** A new confirmation link went out: the button that sent it says where, in its place. */
function showVerificationSent({ sentTo, emailed }: BuiltInAnswers['verification-sent'], source: HTMLElement): void {
  const said = document.createElement('span');
  said.setAttribute('role', 'status');
  said.textContent =
    emailed === 'provider'
      ? `A new link is on its way to ${sentTo}.`
      : emailed === 'outbox'
        ? `A new link for ${sentTo} is in the development outbox (/dev/outbox).`
        : `The link could not be emailed: this installation has no email provider (RESEND_API_KEY), or it failed. Try again later.`;
  source.replaceWith(said);
}

function showSecret(data: BuiltInAnswers['secret'], source: HTMLElement): void {
  const dialog = $<HTMLDialogElement>('#secret-dialog')!;
  $('[data-secret-title]', dialog)!.textContent = source.dataset.secretTitle || 'Your new secret';
  $('[data-secret-note]', dialog)!.textContent = source.dataset.secretNote || '';
  $('#secret-value', dialog)!.textContent = data[source.dataset.secretField || 'key'] ?? null;
  dialog.addEventListener('close', () => location.reload(), { once: true });
  dialog.showModal();
  $('[data-copy]', dialog)!.focus();
}

function confirmFirst(message: string | undefined, confirmLabel: string | undefined): Promise<boolean> {
  const dialog = $<HTMLDialogElement>('#confirm-dialog');
  if (!message || !dialog) return Promise.resolve(true);
  $('[data-confirm-text]', dialog)!.textContent = message;
  $('[data-confirm-yes]', dialog)!.textContent = confirmLabel || 'Confirm';
  dialog.returnValue = '';
  dialog.showModal();
  return new Promise((resolve) => dialog.addEventListener('close', () => resolve(dialog.returnValue === 'yes'), { once: true }));
}

function clearErrors(form: HTMLFormElement): void {
  for (const input of form.querySelectorAll('[aria-invalid]')) input.removeAttribute('aria-invalid');
  for (const slot of form.querySelectorAll('[data-field-error]')) slot.textContent = '';
  const summary = $('.form-error', form);
  if (summary) summary.textContent = '';
}

function showErrors(form: HTMLFormElement, error: { message: string; details?: { field: string; message: string }[] }): void {
  const details = error.details ?? [];
  let placed = false;
  for (const detail of details) {
    const named = form.elements.namedItem(detail.field);
    // A group of checkboxes sharing a name: marked and focused at its first box.
    const input = named instanceof RadioNodeList ? (named[0] as HTMLElement | undefined) : (named as HTMLElement | null);
    const slot = $('[data-field-error="' + detail.field + '"]', form);
    if (input && slot) {
      input.setAttribute('aria-invalid', 'true');
      slot.textContent = detail.message;
      if (!placed) input.focus();
      placed = true;
    }
  }
  const summary = $('.form-error', form);
  if (summary) summary.textContent = placed && details.length ? 'Check the fields marked below.' : error.message;
}

document.addEventListener('submit', async (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.dataset.api) return;
  event.preventDefault();
  clearErrors(form);
  const button = form.querySelector<HTMLButtonElement>('[type="submit"]');
  const fields = new FormData(form, event.submitter);
  const body: Record<string, unknown> = Object.fromEntries(fields);
  for (const input of form.querySelectorAll<HTMLInputElement>('[data-list]')) body[input.name] = fields.getAll(input.name);
  for (const input of form.querySelectorAll<HTMLInputElement>('[data-number]')) {
    if (input.value === '') delete body[input.name];
    else body[input.name] = Number(input.value);
  }
  for (const input of form.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('[data-json]')) {
    const text = input.value.trim();
    if (text === '') {
      delete body[input.name];
      continue;
    }
    try {
      body[input.name] = JSON.parse(text);
    } catch {
      return showErrors(form, { message: 'Check the fields marked below.', details: [{ field: input.name, message: 'Not valid JSON.' }] });
    }
  }
  if (!(await confirmFirst(form.dataset.confirm, form.dataset.confirmLabel))) return;
  if (button) button.disabled = true;
  try {
    then(form.dataset.then, await send(form.dataset.api, form.dataset.method || 'POST', body), form);
  } catch (error) {
    showErrors(form, error as ApiFailure);
  } finally {
    if (button) button.disabled = false;
  }
});

document.addEventListener('click', async (event) => {
  const target = event.target instanceof Element ? event.target.closest('button') : null;
  if (!target) return;
  if (target.dataset.copy) {
    const source = $<HTMLElement>(target.dataset.copy);
    const value = source && (source as HTMLElement & { value?: string }).value;
    const text = source ? (value !== undefined ? value : source.textContent) : '';
    try {
      await navigator.clipboard.writeText(text ?? '');
      const label = target.textContent;
      target.textContent = 'Copied';
      setTimeout(() => {
        target.textContent = label;
      }, 1500);
    } catch {
      const range = document.createRange();
      if (source) range.selectNodeContents(source);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
    }
    return;
  }
  if (!target.dataset.api) return;
  if (!(await confirmFirst(target.dataset.confirm, target.dataset.confirmLabel))) return;
  target.disabled = true;
  try {
    const body: unknown = target.dataset.body ? JSON.parse(target.dataset.body) : undefined;
    then(target.dataset.then, await send(target.dataset.api, target.dataset.method || 'POST', body), target);
  } catch (error) {
    target.disabled = false;
    const status = $('#page-status');
    if (status) status.textContent = (error as Error).message;
    else alert((error as Error).message);
  }
});

document.addEventListener('change', (event) => {
  const select = event.target;
  if (select instanceof HTMLSelectElement && 'navigate' in select.dataset) location.assign(select.value);
});
