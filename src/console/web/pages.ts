/** The console's pages and the permission each needs (the server checks it again). */
export interface PageInfo {
  /** Route segment, `#/<id>`. */
  id: string;
  title: string;
  permission: string;
}

/** Pages in navigation order. */
export const pages: readonly PageInfo[] = [
  { id: 'tags', title: 'Tags', permission: 'TagView' },
  { id: 'trends', title: 'Trends', permission: 'TagView' },
  { id: 'alarms', title: 'Alarms', permission: 'AlertView' },
  { id: 'drivers', title: 'Drivers', permission: 'DriverView' },
  { id: 'publishers', title: 'Publishers', permission: 'PublisherView' },
  { id: 'collections', title: 'Collections', permission: 'CollectionManage' },
  { id: 'profile', title: 'Profile check', permission: 'ProfileManage' },
  { id: 'users', title: 'Users & Groups', permission: 'UserManage' },
  { id: 'events', title: 'Events', permission: 'AuditView' },
  { id: 'assistant', title: 'Assistant', permission: 'AssistantUse' },
];

/** Route segment of My account, which every signed-in account may open (linked from its name). */
export const accountPageId = 'account';
