import test from 'ava';
import { permissionsOf, roleNames } from '../../src/auth/permissions.js';

test('built-in roles grant what docs/security.md says, in documentation order', (t) => {
  t.deepEqual(roleNames, ['Administrators', 'Operators', 'Viewers']);
  t.deepEqual(permissionsOf(['Administrators']), [
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
  ]);
  t.deepEqual(permissionsOf(['Operators']), [
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
  ]);
  t.deepEqual(permissionsOf(['Viewers']), ['TagView', 'AlertView', 'AssistantUse']);
  t.deepEqual(permissionsOf(['Viewers', 'Operators']), [
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
  ]);
  t.deepEqual(permissionsOf([]), []);
});
