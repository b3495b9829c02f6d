/**
 * Permissions and the built-in roles. A route names the
 * one permission it needs; an account holds roles, and its permissions are their union.
 */

/** Every permission, in the order the API documents them. */
export const permissions = [
  'TagView',
  'TagWrite',
  'DBCView',
  'DriverView',
  'DriverManage',
  'DerivedTagManage',
  'PublisherView',
  'PublisherManage',
  'CollectionManage',
  'UserManage',
  'ProfileManage',
  'MetricsView',
  'ThemeManage',
  'AlertView',
  'AlertAcknowledge',
  'AlertShelve',
  'AlertManage',
  'AuditView',
  'AssistantUse',
] as const;

/** A permission a route may require. */
export type Permission = (typeof permissions)[number];

/** The built-in roles and what each grants. */
export const builtInRoles = {
  Administrators: permissions,
  // MetricsView: operators watch the gateway's health; the series name no tag values.
  // Alarms: operators acknowledge and shelve them; taking one out of service and editing
  // definitions is an administrator's change to the plant's protection.
  Operators: [
    'TagView',
    'TagWrite',
    'DBCView',
    'DriverView',
    'PublisherView',
    'MetricsView',
    'AlertView',
    'AlertAcknowledge',
    'AlertShelve',
    'AssistantUse',
  ],
  // AssistantUse: the chat answers with the caller's own permissions (a Viewer's assistant
  // reads what the Viewer reads and can propose nothing), so it is granted with every role;
  // the chat is off until an administrator configures a model.
  Viewers: ['TagView', 'AlertView', 'AssistantUse'],
} as const satisfies Record<string, readonly Permission[]>;

/** A built-in role name. */
export type RoleName = keyof typeof builtInRoles;

/** Every role name. */
export const roleNames = Object.keys(builtInRoles) as RoleName[];

/** The permissions granted by a set of roles, in documentation order. */
export function permissionsOf(roles: readonly RoleName[]): Permission[] {
  const granted = new Set<Permission>(roles.flatMap((role) => builtInRoles[role] ?? []));
  return permissions.filter((permission) => granted.has(permission));
}
