import test from 'ava';
import { valueMeaning } from '../../src/console/web/value-meaning.js';

test('a publisher status: On ok, Error bad, Off off', (t) => {
  t.is(valueMeaning('Publishers/plant-hook/Status', 'On'), 'ok');
  t.is(valueMeaning('Publishers/plant-hook/Status', 'Error'), 'bad');
  t.is(valueMeaning('Publishers/plant-hook/Status', 'Off'), 'off');
  t.is(valueMeaning('Publishers/plant-hook/Status', 'Starting'), undefined);
});

test('the last delivery: true ok, false bad', (t) => {
  t.is(valueMeaning('Publishers/plant-hook/LastDeliverySuccess', true), 'ok');
  t.is(valueMeaning('Publishers/plant-hook/LastDeliverySuccess', false), 'bad');
});

test('a device tag has no meaning tagd could know, whatever its words', (t) => {
  t.is(valueMeaning('Demo/Line1/MachineState', 'Error'), undefined);
  t.is(valueMeaning('Demo/Publishers/x/Status', 'Error'), undefined);
  t.is(valueMeaning('Publishers/plant-hook/LastDeliveryError', 'failed'), undefined);
});
