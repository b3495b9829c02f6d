/**
 * Who is signed in, as signals the whole console reads. The cookies are HttpOnly, so the page
 * learns its account from the sign-in answers and, after a reload, from renewing the session.
 */
import { signal } from '@preact/signals';
import { api, refreshSession, setSessionEndedHandler } from './api-client';
import type { SignInResponse } from './api-types';
import { clearFeed } from './tag-feed';

/** The signed-in account. */
export interface Session {
  username: string;
  permissions: ReadonlySet<string>;
}

/** The current session; null when signed out; undefined while the start-up check runs. */
export const session = signal<Session | null | undefined>(undefined);

/** Why the sign-in page is shown again (a session that ended), or empty. */
export const signInNotice = signal('');

/** True when the session's account holds the permission. */
export function can(permission: string): boolean {
  return session.value?.permissions.has(permission) ?? false;
}

/** Applies a sign-in answer that completed (no step pending). */
export function establish(response: SignInResponse): void {
  signInNotice.value = '';
  session.value = { username: response.username, permissions: new Set(response.permissions) };
}

/** At start: resumes a cookie session if one is alive (Refresh answers who it is). */
export async function resumeSession(): Promise<void> {
  try {
    const response = await refreshSession();
    if (response.ok) {
      establish((await response.json()) as SignInResponse);
      return;
    }
  } catch {
    // Offline or the gateway restarting: show the sign-in page.
  }
  session.value = null;
}

/** Signs out (ends this sign-in on the server, clears the cookies). */
export async function signOut(): Promise<void> {
  try {
    await api('/api/v2/Users/SignOut', { method: 'POST', noRenew: true });
  } catch {
    // Already ended: the cookies were cleared with the 401 too.
  }
  clearFeed();
  session.value = null;
}

setSessionEndedHandler(() => {
  if (session.value) signInNotice.value = 'Your session has ended. Sign in again.';
  clearFeed();
  session.value = null;
});
