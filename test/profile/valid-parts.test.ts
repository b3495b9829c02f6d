import test from 'ava';
import { validParts } from '../../src/profile/valid-parts.js';
import { validateProfile } from '../../src/profile/validate-profile.js';

const sim = (name: string) => ({ type: 'simulator', name, tags: [{ name: 'Flow', kind: 'sine' }] });

function partsOf(document: Record<string, unknown>) {
  const validation = validateProfile(document);
  if (validation.ok) throw new Error('the document was meant to be invalid');
  return validParts(document, validation.errors);
}

test('a component with an error is left out whole and paths map back to the original indices', (t) => {
  const parts = partsOf({
    drivers: [sim('A'), { type: 'modbos', name: 'B' }, sim('C')],
    collections: [
      { name: 'Bad', members: ['x//y'] },
      { name: 'Good', members: ['A/*'] },
    ],
  });
  t.truthy(parts);
  t.deepEqual(
    parts?.profile.drivers.map((driver) => driver.name),
    ['A', 'C'],
  );
  t.deepEqual(
    parts?.profile.collections.map((collection) => collection.name),
    ['Good'],
  );
  t.is(parts?.originalPath('drivers[1].tags[0].name'), 'drivers[2].tags[0].name');
  t.is(parts?.originalPath('collections[0].members[0]'), 'collections[1].members[0]');
  t.is(parts?.originalPath('server.https.certFile'), 'server.https.certFile');
});

test('an error in a section leaves out the smallest section holding it', (t) => {
  const parts = partsOf({
    server: {
      http: { port: 99999 },
      https: { host: '127.0.0.1', port: 0, certFile: 'c.pem', keyFile: 'k.pem' },
    },
    history: { backend: 'sqlite', retentionDays: -1 },
    drivers: [sim('A')],
  });
  t.is(parts?.profile.server.http.port, 8080, 'the default listener stands in for the wrong one');
  t.is(parts?.profile.server.https?.certFile, 'c.pem', 'the HTTPS listener is kept');
  t.is(parts?.profile.history, undefined);
  t.is(parts?.profile.drivers.length, 1);
});

test('a document that is no object, or an error at its root, has no valid parts', (t) => {
  t.is(validParts([], [{ path: '(root)', message: 'x' }]), undefined);
  t.is(validParts({ a: 1 }, [{ path: '(root)', message: 'x' }]), undefined);
});
