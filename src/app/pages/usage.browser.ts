// The usage page in the browser: <div data-reload-soon> (figures still on their way) loads the page again a second later, once.
import { $ } from '../browser/dashboard';

const reloadSoon = $('[data-reload-soon]');
// Once only: a page loaded by that reload (or by the person's own) waits for them to reload again.
const navigation = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
if (reloadSoon && !(navigation && navigation.type === 'reload')) setTimeout(() => location.reload(), 1000);
