/**
 * The settings of each driver type the console's driver form shows (the profile's fields, by
 * their path in the entry, so the API's errors land on them), and the entry a new driver of each
 * type starts from. Fields the form does not show are kept as the entry has them. Pure data.
 */

/** How a setting is edited. */
export type SettingKind = 'text' | 'int' | 'number' | 'boolean' | 'enum' | 'password';

/** One setting of a driver entry. */
export interface DriverSetting {
  /** Path in the entry, e.g. `transport.host`; also the API's error path. */
  path: string;
  label: string;
  kind: SettingKind;
  options?: readonly string[];
  hint?: string;
  /**
   * A discriminator (`transport.kind`): changing it replaces the object it is in with the
   * new kind's defaults, because each kind has its own fields.
   */
  switches?: Record<string, Record<string, unknown>>;
  /** Shown only when this holds for the entry. */
  when?: (entry: Record<string, unknown>) => boolean;
}

const at = (entry: Record<string, unknown>, path: string): unknown =>
  path.split('.').reduce<unknown>((value, key) => (value as Record<string, unknown>)?.[key], entry);

/** The value at a dotted path of an entry. */
export const valueAt = at;

/** A copy of the entry with `value` at the dotted path (undefined removes the field). */
export function withValue(
  entry: Record<string, unknown>,
  path: string,
  value: unknown,
): Record<string, unknown> {
  const [key, ...rest] = path.split('.') as [string, ...string[]];
  const copy = { ...entry };
  if (rest.length > 0) {
    copy[key] = withValue((entry[key] ?? {}) as Record<string, unknown>, rest.join('.'), value);
  } else if (value === undefined) {
    delete copy[key];
  } else {
    copy[key] = value;
  }
  return copy;
}

const transportIs = (kind: string) => (entry: Record<string, unknown>) =>
  at(entry, 'transport.kind') === kind;

/** The driver types the form can add, with the entry each starts from. */
export const newDriverEntries: Readonly<Record<string, Record<string, unknown>>> = {
  modbus: {
    type: 'modbus',
    name: '',
    enabled: true,
    transport: { kind: 'tcp', host: '', port: 502 },
    unitId: 1,
    pollIntervalMs: 1000,
    timeoutMs: 1000,
    tags: [],
  },
  opcua: {
    type: 'opcua',
    name: '',
    enabled: true,
    endpointUrl: 'opc.tcp://',
    securityMode: 'None',
    identity: { kind: 'anonymous' },
    tags: [],
  },
  can: {
    type: 'can',
    name: '',
    enabled: true,
    dbcFile: '',
    transport: { kind: 'socketcan', interface: 'can0' },
  },
  simulator: { type: 'simulator', name: '', enabled: true, scanIntervalMs: 1000, tags: [] },
};

/** Names of the types, as the type menu shows them. */
export const driverTypeNames: Readonly<Record<string, string>> = {
  modbus: 'Modbus (TCP or RTU)',
  opcua: 'OPC UA',
  can: 'CAN bus (DBC file)',
  simulator: 'Simulator',
  derived: 'Derived tags',
};

const allowWrites: DriverSetting = {
  path: 'allowWrites',
  label: 'Allow writes',
  kind: 'boolean',
  hint: 'Master switch: off refuses every write, even to tags marked writable.',
};

/** The settings of each type, in form order. */
export const driverSettings: Readonly<Record<string, readonly DriverSetting[]>> = {
  modbus: [
    {
      path: 'transport.kind',
      label: 'Connection',
      kind: 'enum',
      options: ['tcp', 'rtu'],
      hint: 'tcp: Modbus TCP to a device or gateway; rtu: a serial line.',
      switches: {
        tcp: { kind: 'tcp', host: '', port: 502 },
        rtu: { kind: 'rtu', path: '/dev/ttyUSB0', baudRate: 9600, parity: 'none' },
      },
    },
    { path: 'transport.host', label: 'Host', kind: 'text', when: transportIs('tcp') },
    {
      path: 'transport.port',
      label: 'Port',
      kind: 'int',
      hint: 'Default 502.',
      when: transportIs('tcp'),
    },
    { path: 'transport.path', label: 'Serial device', kind: 'text', when: transportIs('rtu') },
    { path: 'transport.baudRate', label: 'Baud rate', kind: 'int', when: transportIs('rtu') },
    {
      path: 'transport.parity',
      label: 'Parity',
      kind: 'enum',
      options: ['none', 'even', 'odd'],
      when: transportIs('rtu'),
    },
    { path: 'unitId', label: 'Unit id', kind: 'int', hint: '0–255. Default 1.' },
    { path: 'pollIntervalMs', label: 'Poll interval (ms)', kind: 'int', hint: 'Default 1000.' },
    { path: 'timeoutMs', label: 'Timeout (ms)', kind: 'int', hint: 'Per request. Default 1000.' },
    allowWrites,
  ],
  opcua: [
    {
      path: 'endpointUrl',
      label: 'Endpoint URL',
      kind: 'text',
      hint: 'opc.tcp://host[:port][/path]',
    },
    {
      path: 'securityMode',
      label: 'Security mode',
      kind: 'enum',
      options: ['None', 'Sign', 'SignAndEncrypt'],
    },
    {
      path: 'identity.kind',
      label: 'Sign in as',
      kind: 'enum',
      options: ['anonymous', 'username'],
      switches: {
        anonymous: { kind: 'anonymous' },
        username: { kind: 'username', username: '', password: '' },
      },
    },
    {
      path: 'identity.username',
      label: 'User name',
      kind: 'text',
      when: (entry) => at(entry, 'identity.kind') === 'username',
    },
    {
      path: 'identity.password',
      label: 'Password',
      kind: 'password',
      hint: 'Shown masked; leave as is to keep the stored one.',
      when: (entry) => at(entry, 'identity.kind') === 'username',
    },
    {
      path: 'samplingIntervalMs',
      label: 'Sampling interval (ms)',
      kind: 'int',
      hint: 'Default 1000.',
    },
    allowWrites,
  ],
  can: [
    {
      path: 'dbcFile',
      label: 'DBC file',
      kind: 'text',
      hint: 'On the gateway; relative to the profile folder. Its signals become the tags.',
    },
    {
      path: 'transport.kind',
      label: 'Adapter',
      kind: 'enum',
      options: ['socketcan', 'slcan', 'replay'],
      switches: {
        socketcan: { kind: 'socketcan', interface: 'can0' },
        slcan: { kind: 'slcan', port: '/dev/ttyACM0', bitrate: 500_000 },
        replay: { kind: 'replay', file: '' },
      },
    },
    {
      path: 'transport.interface',
      label: 'Interface',
      kind: 'text',
      when: transportIs('socketcan'),
    },
    { path: 'transport.port', label: 'Serial port', kind: 'text', when: transportIs('slcan') },
    {
      path: 'transport.bitrate',
      label: 'Bitrate (bit/s)',
      kind: 'int',
      hint: '10000 to 1000000, e.g. 500000.',
      when: transportIs('slcan'),
    },
    { path: 'transport.file', label: 'candump log', kind: 'text', when: transportIs('replay') },
  ],
  simulator: [
    { path: 'scanIntervalMs', label: 'Scan interval (ms)', kind: 'int', hint: 'Default 1000.' },
    allowWrites,
  ],
};
