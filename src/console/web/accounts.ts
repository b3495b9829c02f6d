/** Facts about accounts the Users & Groups pages share. */
import type { UserView } from './api-types';

/** The built-in roles (docs/security.md, "Roles"). */
export const roleNames = ['Administrators', 'Operators', 'Viewers'] as const;

/** An account's state in words. */
export function stateOf(user: UserView): string {
  if (!user.enabled) return 'Disabled';
  return user.requiresPasswordChange ? 'Enabled, password change due' : 'Enabled';
}
