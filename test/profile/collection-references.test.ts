import test from 'ava';
import { collectionReferenceWarnings } from '../../src/profile/collection-references.js';
import { validateProfile } from '../../src/profile/validate-profile.js';

test('publishers and history entries naming a collection the profile lacks are warned of; defined ones are not', (t) => {
  const validation = validateProfile({
    collections: [{ name: 'Line1', members: ['Demo/*'] }],
    publishers: {
      webhooks: [{ name: 'cloud', destinationUrl: 'http://127.0.0.1:9/', collections: ['Line1'] }],
      mqtt: [
        {
          name: 'plant',
          brokerUrl: 'mqtt://127.0.0.1:1883',
          format: 'json',
          collections: ['Line1', 'Line2'],
        },
      ],
    },
    history: { backend: 'sqlite', log: [{ collection: 'Line1' }, { source: 'Demo/*' }] },
  });
  if (!validation.ok) throw new Error(JSON.stringify(validation.errors));
  t.deepEqual(collectionReferenceWarnings(validation.profile), [
    {
      path: 'publishers.mqtt[0].collections[1]',
      message:
        "Collection 'Line2' does not exist in the profile: publisher 'plant' stays in Error until it is created.",
    },
  ]);
});
