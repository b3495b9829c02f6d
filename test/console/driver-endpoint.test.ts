import test from 'ava';
import { driverEndpoint } from '../../src/console/web/driver-endpoint.js';

test('each driver type names where it reads from', (t) => {
  t.is(
    driverEndpoint({
      type: 'modbus',
      unitId: 3,
      transport: { kind: 'tcp', host: '10.0.0.5', port: 1502 },
    }),
    'tcp://10.0.0.5:1502 (unit 3)',
  );
  t.is(
    driverEndpoint({
      type: 'modbus',
      unitId: 1,
      transport: { kind: 'rtu', path: '/dev/ttyUSB0', baudRate: 19200, parity: 'even' },
    }),
    '/dev/ttyUSB0 at 19200 baud, even parity (unit 1)',
  );
  t.is(
    driverEndpoint({ type: 'opcua', endpointUrl: 'opc.tcp://plc:4840/UA' }),
    'opc.tcp://plc:4840/UA',
  );
  t.is(
    driverEndpoint({ type: 'can', transport: { kind: 'socketcan', interface: 'can0' } }),
    'SocketCAN can0',
  );
  t.is(
    driverEndpoint({
      type: 'can',
      transport: { kind: 'slcan', port: '/dev/ttyACM0', bitrate: 500000 },
    }),
    'SLCAN /dev/ttyACM0 at 500000 bit/s',
  );
  t.is(driverEndpoint({ type: 'simulator' }), 'simulated values');
  t.is(driverEndpoint({ type: 'derived' }), 'computed from other tags');
});
