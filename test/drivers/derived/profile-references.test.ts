/**
 * Loops between derived tags are profile errors naming the loop (within a driver and across
 * drivers); references to tags no driver declares are warnings of `tagd profile check`.
 */
import test from 'ava';
import {
  derivedLoopErrors,
  derivedReferenceWarnings,
} from '../../../drivers/derived/profile-references.js';
import { validateProfile } from '../../../src/profile/validate-profile.js';

const simulator = {
  type: 'simulator',
  name: 'Sim',
  tags: [{ name: 'Flow', kind: 'sine' }],
};

test('a loop within one driver is a profile error naming it', (t) => {
  const profile = {
    drivers: [
      simulator,
      {
        type: 'derived',
        name: 'D',
        tags: [
          { name: 'Ok', expression: '{Sim/Flow} * 2' },
          { name: 'A', expression: '{./B} + 1' },
          { name: 'B', expression: '{./C} + {Sim/Flow}' },
          { name: 'C', expression: '{./A} * 2' },
        ],
      },
    ],
  };
  t.deepEqual(derivedLoopErrors(profile), [
    {
      path: 'drivers[1].tags[1].expression',
      message: 'Derived tags form a loop, so none of them can be evaluated: D/A → D/B → D/C → D/A.',
    },
  ]);
  const validation = validateProfile(profile);
  t.false(validation.ok);
  t.deepEqual(
    validation.errors.map((error) => error.path),
    ['drivers[1].tags[1].expression'],
  );
});

test('a loop across drivers, and a tag reading itself, are errors too', (t) => {
  const across = {
    drivers: [
      { type: 'derived', name: 'One', tags: [{ name: 'X', expression: '{Two/Y} + 1' }] },
      { type: 'derived', name: 'Two', tags: [{ name: 'Y', expression: '{One/X} + 1' }] },
    ],
  };
  t.is(
    derivedLoopErrors(across)[0]?.message,
    'Derived tags form a loop, so none of them can be evaluated: One/X → Two/Y → One/X.',
  );
  const self = {
    drivers: [{ type: 'derived', name: 'D', tags: [{ name: 'X', expression: '{./X} + 1' }] }],
  };
  t.is(derivedLoopErrors(self)[0]?.message?.endsWith('D/X → D/X.'), true);
});

test('chains without a loop are fine, in any order of declaration', (t) => {
  const chain = {
    drivers: [
      simulator,
      {
        type: 'derived',
        name: 'D',
        tags: [
          { name: 'C', expression: '{./B} + 1' },
          { name: 'B', expression: '{./A} + 1' },
          { name: 'A', expression: '{Sim/Flow}' },
        ],
      },
    ],
  };
  t.deepEqual(derivedLoopErrors(chain), []);
  t.true(validateProfile(chain).ok);
});

test('references to tags the profile does not declare are warnings', (t) => {
  const profile = {
    drivers: [
      simulator,
      { type: 'simulator', name: 'Off', enabled: false, tags: [{ name: 'T', kind: 'sine' }] },
      { type: 'can', name: 'Bus', tags: undefined },
      {
        type: 'derived',
        name: 'D',
        tags: [
          { name: 'Good', expression: '{Sim/Flow} + {./Other} + {Bus/Msg/Sig}' },
          { name: 'Other', expression: '{Publishers/Hook/Status} == "On"' },
          { name: 'Typo', expression: '{Sim/Flw} + {Nobody/X} + {Off/T}' },
        ],
      },
    ],
  };
  t.deepEqual(derivedReferenceWarnings(profile), [
    {
      path: 'drivers[3].tags[2].expression',
      message:
        "reads {Sim/Flw}, but driver 'Sim' has no tag 'Flw': D/Typo is Bad (NotFound) until that tag exists.",
    },
    {
      path: 'drivers[3].tags[2].expression',
      message:
        "reads {Nobody/X}, but no driver named 'Nobody' is in the profile: D/Typo is Bad (NotFound) until that tag exists.",
    },
    {
      path: 'drivers[3].tags[2].expression',
      message:
        "reads {Off/T}, but driver 'Off' is disabled: D/Typo is Bad (NotFound) until that tag exists.",
    },
  ]);
});
