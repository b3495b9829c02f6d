import test from 'ava';
import {
  deliveryHealthDefinitions,
  deliveryHealthTagIds,
} from '../../src/publishers/delivery-health.js';

test('the delivery health tags sit under Publishers/<name>/ and are described for operators', (t) => {
  const ids = deliveryHealthTagIds('cloud');
  t.deepEqual(ids, {
    status: 'Publishers/cloud/Status',
    lastDeliverySuccess: 'Publishers/cloud/LastDeliverySuccess',
    lastDeliveryError: 'Publishers/cloud/LastDeliveryError',
  });
  const definitions = deliveryHealthDefinitions(ids, 'MQTT', 'cloud');
  t.deepEqual(
    definitions.map((definition) => definition.fullTagId),
    [ids.status, ids.lastDeliverySuccess, ids.lastDeliveryError],
  );
  t.is(definitions[0]?.metadata?.description, 'Status of MQTT publisher cloud: On, Off or Error');
});
