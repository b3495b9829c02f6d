/**
 * config/examples/plant-floor.json, docs/profile.md's example of a gateway with a Modbus device and
 * an OPC UA server, runs in a daemon against real peers on loopback: modbus-serial's ServerTCP
 * holding the registers the example reads, and a node-opcua server with the example's NodeIds,
 * its user and SignAndEncrypt. Only the addresses of the peers are changed.
 */
// Before node-opcua loads: its load-time warnings stay out of the test output.
import '../../drivers/opcua/node-opcua-quiet.js';
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { DataType } from 'node-opcua';
import { opcuaPkiDir, trustedCertsDir } from '../../drivers/opcua/pki.js';
import type { Sample } from '../../src/tags/sample.js';
import { demoDaemon } from '../helpers/demo-daemon.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { startModbusSerialServer } from '../helpers/modbus-serial-server.js';
import { OpcuaTestServer } from '../helpers/opcua-server.js';
import { tempDir } from '../helpers/temp-dir.js';

interface ExampleDriver {
  name: string;
  transport?: { kind?: string; host: string; port: number };
  endpointUrl?: string;
  identity?: { username: string; password: string };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Two ISO 8859-1 characters per register, high byte first, NUL-padded to `registers`. */
function stringRegisters(text: string, registers: number): number[] {
  const codes = [...text].map((character) => character.charCodeAt(0));
  return Array.from(
    { length: registers },
    (_, i) => ((codes[2 * i] ?? 0) << 8) | (codes[2 * i + 1] ?? 0),
  );
}

test('the plant-floor example reads its Modbus device and OPC UA server and logs history', async (t) => {
  const example = JSON.parse(
    await readFile(new URL('../../config/examples/plant-floor.json', import.meta.url), 'utf8'),
  ) as { drivers: ExampleDriver[] };
  const [boiler, press] = example.drivers as [ExampleDriver, ExampleDriver];

  // Boiler1: int16 0.1 °C, float32 word-swapped (CDAB), uint32, coil, bit 3, input, string.
  const hr = new Array<number>(210).fill(0);
  hr[10] = 0b1000;
  hr[100] = 0x0001;
  hr[101] = 0x0000; // 65,536 h
  hr.splice(200, 8, ...stringRegisters('BX-200', 8));
  const modbus = await startModbusSerialServer({
    ir: [215, 0, 0x0000, 0x4020], // 21.5 °C; 2.5 bar = 0x40200000
    hr,
    co: [1],
    di: [0, 0, 0, 0, 1],
  });
  t.teardown(() => modbus.close());

  const press1 = await OpcuaTestServer.start({
    pkiDir: join(await tempDir(t), 'server-pki'),
    users: { [press.identity?.username ?? '']: press.identity?.password ?? '' },
    variables: {
      'Press1.Hydraulics.Pressure': { dataType: DataType.Double, value: 182.5 },
      'Press1.Hydraulics.OilTemp': { dataType: DataType.Double, value: 48 },
      'Press1.Strokes': { dataType: DataType.UInt32, value: 1200 },
      'Press1.Running': { dataType: DataType.Boolean, value: true },
      'Press1.RecipeName': { dataType: DataType.String, value: 'Bracket-A' },
    },
  });
  t.teardown(() => press1.stop());

  boiler.transport = { ...boiler.transport, host: '127.0.0.1', port: modbus.port };
  press.endpointUrl = press1.endpointUrl;
  // The operator's step: trust the press's server certificate (see `tagd opcua trust`).
  const stateDir = join(await tempDir(t), 'state');
  const trusted = trustedCertsDir(opcuaPkiDir(stateDir));
  await mkdir(trusted, { recursive: true });
  await copyFile(press1.certificateFile, join(trusted, 'press1.pem'));

  const clock = new ManualClock(Date.now());
  const { daemon, logs } = await demoDaemon(t, { profile: example, stateDir, clock });
  const store = daemon.store;
  if (!store) return t.fail('the daemon has a tag store');
  const ids = store.match('**').filter((id) => /^(Boiler1|Press1)\//.test(id));
  t.is(ids.length, 12, ids.join(', '));
  const good = (pattern: RegExp) =>
    ids.filter((id) => pattern.test(id)).every((id) => store.get(id)?.quality === 'Good');
  // Real waits for the network; the manual clock drives the Modbus polls. It runs 20 times
  // faster than the OPC UA server's own real-time keep-alives, whose silence the driver measures
  // on the same clock: it moves only until the Modbus tags are read, then stands still while
  // the OPC UA values arrive.
  for (let i = 0; i < 400 && !good(/^Boiler1\//); i++) {
    clock.advance(1_000);
    await sleep(50);
  }
  for (let i = 0; i < 400 && !good(/./); i++) await sleep(50);
  const bad = ids.filter((id) => store.get(id)?.quality !== 'Good');
  t.deepEqual(
    bad.map((id) => store.get(id)),
    [],
    'every tag is Good',
  );
  const value = (id: string) => (store.get(id) as Sample).value;
  t.is(value('Boiler1/Water/Temperature'), 21.5);
  t.is(value('Boiler1/Water/Pressure'), 2.5);
  t.is(value('Boiler1/Burner/Hours'), 65_536);
  t.is(value('Boiler1/Burner/Running'), true);
  t.is(value('Boiler1/Burner/Flame'), true);
  t.is(value('Boiler1/Alarm/LowWater'), true);
  t.is(value('Boiler1/Model'), 'BX-200');
  t.is(value('Press1/Hydraulics/Pressure'), 182.5);
  t.is(value('Press1/Hydraulics/OilTemperature'), 48);
  t.is(value('Press1/Strokes'), 1200);
  t.is(value('Press1/Running'), true);
  t.is(value('Press1/Recipe'), 'Bracket-A');

  // History: the Boiler collection is logged on change.
  const history = daemon.history;
  if (!history) return t.fail('the example configures history');
  await history.flush();
  const logged = await history.raw({
    tagIds: ['Boiler1/Water/Temperature'],
    startMs: 0,
    stopMs: clock.now() + 1_000,
    limit: 10,
  });
  t.true(
    logged.some((sample) => sample.quality === 'Good' && sample.value === 21.5),
    JSON.stringify(logged),
  );
  t.false(
    logs.text().includes(press.identity?.password ?? '?'),
    'the OPC UA password is not logged',
  );
});
