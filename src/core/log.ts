/**
 * Sluice's log lines: one JSON object per line, which Workers Logs (wrangler.toml [observability]) index by
 * field and `wrangler tail` prints as it comes. `level` picks the console method, so the platform's own level
 * matches; `event` says what the line is about. Never a key, a token or a secret: ids only.
 */
export type LogLevel = 'info' | 'warn' | 'error';

export function logEvent(level: LogLevel, event: string, fields: Record<string, unknown>): void {
  const line = JSON.stringify({ level, event, ...fields });
  if (level === 'error') console.error(line);
  else if (level === 'warn') console.warn(line);
  else console.log(line);
}

/** The level of a request's line: a server failure is an error, a refusal a warning, the rest information. */
export function levelOfStatus(status: number): LogLevel {
  return status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
}
