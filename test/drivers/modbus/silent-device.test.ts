/**
 * A device that stops answering while its connection stays open (issue 10, item 2): no tag may
 * stay Good. The driver turns the tags of unanswered requests Bad (Timeout) and, when it gives
 * up on the connection, the tags of the reads it abandons Unavailable; the store's refresh
 * bound, which the driver declares, turns any tag not refreshed in time Stale. On the manual
 * clock against a raw TCP peer that answers until told to fall silent.
 */
import test from 'ava';
import type { Quality } from '../../../src/tags/sample.js';
import { modbusSubject, until } from '../../helpers/modbus-harness.js';
import { mbapRegistersAnswer, startRawModbusPeer } from '../../helpers/modbus-raw-peer.js';

/** Five tags, each in a block of its own (addresses further apart than maxGap). */
const addresses = [0, 100, 200, 300, 400];
const tags = addresses.map((address, index) => ({
  name: `T${index + 1}`,
  table: 'holdingRegister',
  address,
}));
const ids = tags.map((tag) => `Dev/${tag.name}`);

/** A peer whose register at address a holds a + 1, until `silent` is set. */
async function fallingSilentPeer() {
  const state = { silent: false };
  const peer = await startRawModbusPeer((request) =>
    state.silent ? undefined : mbapRegistersAnswer(request, [request.address + 1]),
  );
  return { peer, state };
}

test.serial(
  'the reads abandoned when the driver gives up on a silent device turn Unavailable at once',
  async (t) => {
    const { peer, state } = await fallingSilentPeer();
    t.teardown(() => peer.close());
    const { driver, store, clock } = modbusSubject({
      transport: { kind: 'tcp', host: '127.0.0.1', port: peer.port },
      pollIntervalMs: 1000,
      timeoutMs: 500,
      timeoutsBeforeReconnect: 3,
      reconnectDelayMs: 100,
      tags,
    });
    t.teardown(() => driver.stop());
    // The store's sweep is not started: this is the driver's own verdict, without the guard.
    await driver.start();
    await until(() => ids.every((id) => store.get(id)?.quality === 'Good'), 'every tag is Good');
    t.deepEqual(
      ids.map((id) => store.require(id).value),
      addresses.map((address) => address + 1),
    );

    state.silent = true;
    clock.advance(1000);
    // One request at a time: each timeout sends the next block's.
    for (const sent of [6, 7, 8]) {
      await until(() => peer.requests.length === sent, `request ${sent} is sent`);
      clock.advance(500);
    }
    await until(() => ids.every((id) => store.get(id)?.quality !== 'Good'), 'no tag is Good');
    const qualities = ids.map((id) => [store.require(id).quality, store.require(id).reason]);
    t.deepEqual(qualities, [
      ['Bad', 'Timeout'],
      ['Bad', 'Timeout'],
      ['Bad', 'Timeout'],
      ['Unavailable', 'Disconnected'],
      ['Unavailable', 'Disconnected'],
    ]);
    t.is(
      store.require('Dev/T4').message,
      'Not read: 3 requests in a row were not answered within 500 ms; reconnecting',
    );
    t.is(store.require('Dev/T5').value, undefined);
    t.is(driver.status().state, 'Reconnecting');
    // Block 4's request went out as block 3's timed out, just before the driver gave up on the
    // connection; block 5's never did.
    t.deepEqual(
      peer.requests.slice(5).map((request) => request.address),
      [0, 100, 200, 300],
    );

    // The new connection's poll times out the same way: still nothing Good.
    clock.advance(100);
    await until(() => peer.connections() === 2, 'a new connection is made');
    const onSecond = () => peer.requests.filter((request) => request.connection === 2).length;
    for (const sent of [1, 2, 3]) {
      await until(() => onSecond() === sent, `request ${sent} of the new connection is sent`);
      clock.advance(500);
    }
    await until(() => driver.status().counters?.disconnects === 2, 'the driver gives up again');
    t.true(ids.every((id) => store.require(id).quality !== 'Good'));
  },
);

test.serial(
  'a tag the driver does not refresh turns Stale after max(3 × poll interval, interval + timeout)',
  async (t) => {
    const { peer, state } = await fallingSilentPeer();
    t.teardown(() => peer.close());
    const { driver, store, clock } = modbusSubject({
      transport: { kind: 'tcp', host: '127.0.0.1', port: peer.port },
      pollIntervalMs: 1000,
      timeoutMs: 500,
      // Never gives up on the connection: a poll of five silent blocks takes 2.5 s, and its
      // tags are written only when it ends.
      timeoutsBeforeReconnect: 100,
      tags,
    });
    t.teardown(() => driver.stop());
    await store.start();
    t.teardown(() => store.stop());
    await driver.start();
    t.deepEqual(
      ids.map((id) => store.staleLimitMs(id)),
      ids.map(() => 3000),
      'max(3 × 1000, 1000 + 500)',
    );
    await until(() => ids.every((id) => store.get(id)?.quality === 'Good'), 'every tag is Good');

    state.silent = true;
    clock.advance(1000);
    for (const sent of [6, 7, 8, 9]) {
      await until(() => peer.requests.length === sent, `request ${sent} is sent`);
      if (sent < 9) clock.advance(500);
    }
    // t = 2999 ms after the last Good write: the poll is still under way, nothing written yet.
    clock.advance(499);
    const all = (quality: Quality) => ids.every((id) => store.get(id)?.quality === quality);
    t.true(all('Good'), 'Good up to the bound');
    clock.advance(1);
    t.true(all('Stale'), 'Stale at the bound');
    t.like(store.require('Dev/T5'), {
      reason: 'NoUpdate',
      value: 401,
      message:
        'No update for 3000 ms, longer than its driver takes to refresh it while the device answers.',
    });
    // The poll ends with the fifth timeout: the driver's verdict replaces Stale.
    await until(() => peer.requests.length === 10, 'request 10 is sent');
    clock.advance(500);
    await until(() => all('Bad'), 'every tag is Bad');
    t.is(store.require('Dev/T5').reason, 'Timeout');
  },
);

test.serial('an explicit staleAfterMs tightens the bound but never loosens it', async (t) => {
  for (const [staleAfterMs, fast, slow] of [
    [undefined, 3500, 180_000],
    [2000, 2000, 2000],
    [10_000, 3500, 10_000],
  ] as const) {
    const { driver, store } = modbusSubject({
      // Nothing listens on port 1: only the declared bounds matter here.
      transport: { kind: 'tcp', host: '127.0.0.1', port: 1 },
      pollIntervalMs: 1000,
      timeoutMs: 2500,
      ...(staleAfterMs !== undefined ? { staleAfterMs } : {}),
      tags: [
        { name: 'Fast', table: 'coil', address: 0 },
        { name: 'Slow', table: 'coil', address: 1, pollIntervalMs: 60_000 },
      ],
    });
    await driver.start();
    // Fast: max(3 × 1000, 1000 + 2500); Slow: max(3 × 60000, 60000 + 2500).
    t.is(store.staleLimitMs('Dev/Fast'), fast, `Fast with staleAfterMs ${staleAfterMs}`);
    t.is(store.staleLimitMs('Dev/Slow'), slow, `Slow with staleAfterMs ${staleAfterMs}`);
    await driver.stop();
  }
});
