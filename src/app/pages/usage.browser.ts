// The usage page in the browser: <div data-reload-soon> (figures still on their way) loads the page again a second later, once.
import { $ } from '../browser/dashboard';

const reloadSoon = $('[data-reload-soon]');
// Once only: a page loaded by that reload (or by the person's own) waits for them to reload again.
const navigation = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
if (reloadSoon && !(navigation && navigation.type === 'reload')) setTimeout(() => location.reload(), 1000);

// The usage export's form: the date fields bound each day, but not one against the other. Days out of order, or more of
// them than an export takes, are said on the field before the browser asks (the API would refuse them with its JSON).
const exportForm = $<HTMLFormElement>('form[data-usage-export]');
if (exportForm) {
  const from = $<HTMLInputElement>('input[name="from"]', exportForm)!;
  const to = $<HTMLInputElement>('input[name="to"]', exportForm)!;
  const maxDays = Number(exportForm.dataset.maxDays);
  const check = () => {
    const days = from.value && to.value ? (Date.parse(to.value) - Date.parse(from.value)) / 86_400_000 + 1 : 1;
    from.setCustomValidity(days < 1 ? 'Choose a day on or before "To".' : days > maxDays ? `At most ${maxDays} days, "To" included: this is ${days}.` : '');
  };
  from.addEventListener('input', check);
  to.addEventListener('input', check);
  exportForm.addEventListener('submit', (event) => {
    check();
    if (!exportForm.checkValidity()) {
      event.preventDefault();
      exportForm.reportValidity();
    }
  });
}
