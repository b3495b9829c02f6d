import test from 'ava';
import { type LicenseState, unlicensed } from '../../src/license/license.js';
import {
  driverLicenseBlocker,
  licensedDrivers,
  relayDriverTypes,
} from '../../src/license/licensed-drivers.js';

const standard: LicenseState = { edition: 'standard', licensee: 'Plant', features: new Set() };
const server: LicenseState = {
  edition: 'server',
  licensee: 'Plant',
  features: new Set(['dataRelay']),
};

test('the relay drivers need the data relay feature; the others need nothing', (t) => {
  t.deepEqual(Object.keys(licensedDrivers).sort(), ['mqtt', 'sparkplug']);
  for (const type of ['simulator', 'modbus', 'opcua', 'can', 'derived', '__proto__', 'toString']) {
    t.is(driverLicenseBlocker(unlicensed, type), undefined, type);
  }
  t.is(driverLicenseBlocker(server, 'mqtt'), undefined);
  t.is(driverLicenseBlocker(server, 'sparkplug'), undefined);
});

test('the relay driver types (the Relay API lists them) are the drivers licensed as the data relay', (t) => {
  t.deepEqual(relayDriverTypes, ['sparkplug', 'mqtt']);
  for (const type of relayDriverTypes) t.is(licensedDrivers[type]?.feature, 'dataRelay');
});

test('the reason names the driver, the feature, the editions and what is installed, never a file', (t) => {
  t.is(
    driverLicenseBlocker(
      { ...unlicensed, problem: 'Cannot read the license file /etc/x.json.' },
      'sparkplug',
    ),
    'The Sparkplug host driver (`sparkplug`) needs the data relay feature of the server or enterprise edition; this installation is not licensed.',
  );
  t.is(
    driverLicenseBlocker(standard, 'mqtt'),
    'The MQTT subscriber driver (`mqtt`) needs the data relay feature of the server or enterprise edition; this installation is licensed for the standard edition.',
  );
});
