import type { Context } from 'hono';
import type { DashboardEnv } from '../context';
import { type DeviceAccount, rememberDevice } from './devices';
import { startSession } from './sessions';

/**
 * Signs this browser in to an account: a fresh session, made only while the password's hash is still `passwordHash`
 * (the one just verified or set: sessions.ts), and its known-device cookie signed for the account as it is now,
 * keeping the browser's device id when it had one (devices.ts). What sign-up, sign-in and a new password all do.
 * Answers false, setting nothing, when the password changed meanwhile.
 */
export async function signInBrowser(c: Context<DashboardEnv>, account: DeviceAccount & { id: string }, passwordHash: string, device?: string | null): Promise<boolean> {
  if (!(await startSession(c, account.id, passwordHash))) return false;
  await rememberDevice(c, account, device ?? undefined);
  return true;
}
