/** Facts about accounts the Users & Groups pages share. */
import type { UserView } from './api-types';

/** The built-in roles (README "Roles"). */
export const roleNames = ['Administrators', 'Operators', 'Viewers'] as const;

/** Whether an account has two-factor enrolled. */
export function twoFactorOf(user: UserView): boolean {
  return Boolean(user.twoFactorEnabled ?? user.twoFactor);
}
