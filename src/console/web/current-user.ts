/**
 * The signed-in account as the server sees it (`GET /api/v2/Users/Current`): its two-factor
 * state for My account, and the gateway's version and host name for the header of every page.
 */
import { signal } from '@preact/signals';
import { api } from './api-client';
import type { CurrentUser } from './api-types';

/** The last answer; undefined until it arrives (or when signed out). */
export const currentUser = signal<CurrentUser | undefined>(undefined);

/** Loads (or reloads, after a change of the account) {@link currentUser}. */
export async function loadCurrentUser(): Promise<CurrentUser> {
  const answer = await api<CurrentUser>('/api/v2/Users/Current');
  currentUser.value = answer;
  return answer;
}
