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
  { id: 'alarms', title: 'Alarms', permission: 'AlertView' },
  { id: 'drivers', title: 'Drivers', permission: 'DriverView' },
  { id: 'publishers', title: 'Publishers', permission: 'PublisherView' },
  { id: 'collections', title: 'Collections', permission: 'CollectionManage' },
  { id: 'users', title: 'Users & Groups', permission: 'UserManage' },
  { id: 'assistant', title: 'Assistant', permission: 'AssistantUse' },
];
