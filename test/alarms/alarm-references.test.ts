import test from 'ava';
import { alarmReferenceWarnings } from '../../src/alarms/alarm-references.js';

const drivers = [
  { type: 'simulator', name: 'Sim', tags: [{ name: 'Temp' }, { name: 'Door' }] },
  { type: 'simulator', name: 'Old', enabled: false, tags: [{ name: 'T' }] },
  { type: 'can', name: 'Car', dbcFile: 'x.dbc' },
];

test('references to tags the profile does not declare are warnings, each at its field', (t) => {
  const warnings = alarmReferenceWarnings({
    drivers,
    alarms: [
      { name: 'Fine', source: 'Sim/Temp', condition: 'High', limit: 1 },
      { name: 'Typo', source: 'Sim/Tmep', condition: 'High', limit: 1 },
      { name: 'Gone', source: 'Nope/T', condition: 'BadQuality' },
      { name: 'Off', source: 'Old/T', condition: 'Deviation', limit: 1, setpoint: 'Sim/Sp' },
      { name: 'Can', source: 'Car/Engine/Speed', condition: 'BadQuality' },
      {
        name: 'Expr',
        condition: 'Expression',
        expression: '{Sim/Temp} > 1 && {Sim/Dor}',
        suppressWhen: '{Publishers/feed/Status} == "Off"',
      },
      { name: 'Disabled', source: 'Nope/T', condition: 'BadQuality', enabled: false },
    ],
  });
  t.deepEqual(warnings, [
    {
      path: 'alarms[1].source',
      message:
        "reads Sim/Tmep, but driver 'Sim' has no tag 'Tmep': alarm Typo cannot be evaluated, so the alarm shows its state unconfirmed until that tag exists.",
    },
    {
      path: 'alarms[2].source',
      message:
        "reads Nope/T, but no driver named 'Nope' is in the profile: alarm Gone counts as missing, so the alarm turns active until that tag exists.",
    },
    {
      path: 'alarms[3].source',
      message:
        "reads Old/T, but driver 'Old' is disabled: alarm Off cannot be evaluated, so the alarm shows its state unconfirmed until that tag exists.",
    },
    {
      path: 'alarms[3].setpoint',
      message:
        "reads Sim/Sp, but driver 'Sim' has no tag 'Sp': alarm Off cannot be evaluated, so the alarm shows its state unconfirmed until that tag exists.",
    },
    {
      path: 'alarms[5].expression',
      message:
        "reads Sim/Dor, but driver 'Sim' has no tag 'Dor': alarm Expr cannot be evaluated, so the alarm shows its state unconfirmed until that tag exists.",
    },
  ]);
});
