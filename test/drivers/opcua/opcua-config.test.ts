/**
 * The OPC UA driver's pure parts: its profile schema (and config/examples/opcua.json), the
 * subscription plan and the DataValue → sample mapping. No server here.
 */
// Before node-opcua loads: its load-time warnings stay out of the test output.
import '../../../drivers/opcua/node-opcua-quiet.js';
import { readFileSync } from 'node:fs';
import test from 'ava';
import {
  DataType,
  DataValue,
  EndpointDescription,
  MessageSecurityMode,
  SecurityPolicy,
  StatusCodes,
  UserTokenType,
  Variant,
  VariantArrayType,
} from 'node-opcua';
import { clearPasswordReason, userNamePolicy } from '../../../drivers/opcua/password-exposure.js';
import { dataValueSample, statusSample } from '../../../drivers/opcua/sample-mapping.js';
import { effectiveSecurityPolicy, opcuaDriverSchema } from '../../../drivers/opcua/schema.js';
import {
  defaultItemsPerCall,
  type PlanInput,
  planSubscriptions,
} from '../../../drivers/opcua/subscription-plan.js';
import { profileSchema } from '../../../src/profile/schema.js';
import { findSecrets } from '../../../src/profile/secret-fields.js';
import { validateProfile } from '../../../src/profile/validate-profile.js';

const example: unknown = JSON.parse(
  readFileSync(new URL('../../../config/examples/opcua.json', import.meta.url), 'utf8'),
);

const minimal = {
  type: 'opcua',
  name: 'Plc',
  endpointUrl: 'opc.tcp://127.0.0.1:4840',
  tags: [{ name: 'T', nodeId: 'ns=2;s=T' }],
};

test('config/examples/opcua.json validates; its password is a secret field', (t) => {
  const result = validateProfile(example);
  t.deepEqual(result.errors, []);
  const driver = result.profile?.drivers[0];
  if (driver?.type !== 'opcua') return t.fail('the example holds an OPC UA driver');
  t.is(driver.tags.length, 5);
  t.deepEqual(
    findSecrets(profileSchema, example).map((found) => found.path.join('.')),
    ['drivers.0.identity.password'],
  );
});

test('defaults: security None, anonymous, 1 s publishing and sampling, 10 s keep-alive', (t) => {
  const config = opcuaDriverSchema.parse(minimal);
  t.like(config, {
    securityMode: 'None',
    identity: { kind: 'anonymous' },
    allowInsecurePassword: false,
    applicationName: 'tagd',
    publishingIntervalMs: 1000,
    samplingIntervalMs: 1000,
    reconnectDelayMs: 1000,
    maxReconnectDelayMs: 30_000,
    keepAliveIntervalMs: 10_000,
    sessionTimeoutMs: 60_000,
  });
  t.is(effectiveSecurityPolicy(config), 'None');
  t.is(
    effectiveSecurityPolicy(opcuaDriverSchema.parse({ ...minimal, securityMode: 'Sign' })),
    'Basic256Sha256',
  );
});

test('the schema refuses what cannot work', (t) => {
  const problems = (input: Record<string, unknown>) =>
    opcuaDriverSchema
      .safeParse({ ...minimal, ...input })
      .error?.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`) ?? [];
  t.regex(problems({ endpointUrl: 'http://plc:4840' })[0] ?? '', /^endpointUrl: must be opc\.tcp/);
  t.regex(problems({ securityMode: 'Sign', securityPolicy: 'None' })[0] ?? '', /^securityPolicy/);
  t.regex(problems({ securityPolicy: 'Basic256Sha256' })[0] ?? '', /^securityPolicy/);
  t.regex(problems({ securityPolicy: 'Basic128Rsa15' })[0] ?? '', /^securityPolicy/);
  t.regex(problems({ certificateFile: 'client.pem' })[0] ?? '', /^privateKeyFile/);
  t.regex(
    problems({ tags: [{ name: 'T', nodeId: 'Temperature' }] })[0] ?? '',
    /^tags\.0\.nodeId: must be a NodeId/,
  );
  t.regex(
    problems({ identity: { kind: 'username', username: 'u', password: '' } })[0] ?? '',
    /^identity\.password/,
  );
  t.deepEqual(problems({ keepAliveIntervalMs: 20_000, sessionTimeoutMs: 20_000 }), [
    'keepAliveIntervalMs: keepAliveIntervalMs must be less than sessionTimeoutMs',
  ]);
  t.regex(problems({ keepAliveIntervalMs: 100 })[0] ?? '', /^keepAliveIntervalMs/);
  for (const nodeId of ['i=2258', 'ns=3;i=1001', 'nsu=urn:x:y;s=A.B', 'ns=1;b=AAEC', 's=a;b']) {
    t.deepEqual(problems({ tags: [{ name: 'T', nodeId }] }), [], nodeId);
  }
});

const tag = (publishingIntervalMs: number, samplingIntervalMs = 1000, deadband?: number) =>
  ({ publishingIntervalMs, samplingIntervalMs, deadband }) as PlanInput;

test('the plan: one set of subscriptions per publishing interval, at most 1,000 items each', (t) => {
  const tags = [
    ...Array.from({ length: 2500 }, () => tag(1000)),
    ...Array.from({ length: 10 }, () => tag(100)),
  ];
  const plans = planSubscriptions(tags);
  t.deepEqual(
    plans.map((plan) => [plan.publishingIntervalMs, plan.itemCount]),
    [
      [100, 10],
      [1000, 1000],
      [1000, 1000],
      [1000, 500],
    ],
  );
  const covered = plans.flatMap((plan) => plan.batches.flatMap((batch) => batch.tags));
  t.deepEqual(
    covered.sort((a, b) => a - b),
    tags.map((_, index) => index),
  );
  for (const plan of plans) {
    for (const batch of plan.batches) t.true(batch.tags.length <= defaultItemsPerCall);
  }
});

test('the plan: calls share monitoring parameters and respect the server per-call limit', (t) => {
  const tags = [
    ...Array.from({ length: 300 }, () => tag(1000, 500)),
    ...Array.from({ length: 5 }, () => tag(1000, 500, 2)),
  ];
  const [plan] = planSubscriptions(tags, 100);
  t.deepEqual(
    plan?.batches.map((batch) => [batch.samplingIntervalMs, batch.deadband, batch.tags.length]),
    [
      [500, undefined, 100],
      [500, undefined, 100],
      [500, undefined, 100],
      [500, 2, 5],
    ],
  );
  // 0: the server sets no limit.
  t.is(planSubscriptions(tags, 0)[0]?.batches.length, 2);
});

const mapped = { fullTagId: 'Plc/T', metadata: { unit: 'bar' } };
const at = new Date('2026-03-04T05:06:07.089Z');
const value = (dataType: DataType, v: unknown, statusCode = StatusCodes.Good) =>
  new DataValue({
    value: new Variant({ dataType, arrayType: VariantArrayType.Scalar, value: v }),
    statusCode,
    sourceTimestamp: at,
  });

test('values: numbers, 64-bit integers, booleans, text, times; the source timestamp', (t) => {
  t.like(dataValueSample(mapped, value(DataType.Double, 1.5), 0), {
    fullTagId: 'Plc/T',
    utcTimestamp: '2026-03-04T05:06:07.089Z',
    quality: 'Good',
    value: 1.5,
    metadata: { unit: 'bar' },
  });
  t.like(dataValueSample(mapped, value(DataType.UInt64, [1, 0]), 0), { value: 2 ** 32 });
  t.like(dataValueSample(mapped, value(DataType.Int64, [0xffffffff, 0xffffffff]), 0), {
    value: -1,
  });
  t.like(dataValueSample(mapped, value(DataType.Boolean, false), 0), { value: false });
  t.like(dataValueSample(mapped, value(DataType.String, 'on'), 0), { value: 'on' });
  t.like(dataValueSample(mapped, value(DataType.DateTime, at), 0), {
    value: '2026-03-04T05:06:07.089Z',
  });
  t.like(dataValueSample(mapped, value(DataType.StatusCode, StatusCodes.BadTimeout), 0), {
    value: 'BadTimeout',
  });
  const noTime = new DataValue({ value: new Variant({ dataType: DataType.Int32, value: 3 }) });
  t.like(dataValueSample(mapped, noTime, Date.parse('2026-01-01T00:00:00Z')), {
    utcTimestamp: '2026-01-01T00:00:00.000Z',
    value: 3,
  });
});

test('64-bit integers beyond 2^53: the nearest double as value, the exact decimal as valueText', (t) => {
  // 2^53 + 1 has no double: the value is 2^53, the text says what the server sent.
  t.deepEqual(dataValueSample(mapped, value(DataType.UInt64, [0x0020_0000, 1]), 0), {
    fullTagId: 'Plc/T',
    utcTimestamp: '2026-03-04T05:06:07.089Z',
    quality: 'Good',
    value: 2 ** 53,
    metadata: { unit: 'bar', valueText: '9007199254740993' },
  });
  t.like(dataValueSample(mapped, value(DataType.UInt64, [0xffff_ffff, 0xffff_ffff]), 0), {
    value: 2 ** 64,
    metadata: { valueText: '18446744073709551615' },
  });
  t.like(dataValueSample(mapped, value(DataType.Int64, [0x8000_0000, 0]), 0), {
    value: -(2 ** 63),
    metadata: { valueText: '-9223372036854775808' },
  });
  t.like(dataValueSample(mapped, value(DataType.Int64, [0xffdf_ffff, 0xffff_ffff]), 0), {
    value: -(2 ** 53),
    metadata: { valueText: '-9007199254740993' },
  });
  // 2^53 itself is exact: no text.
  const exact = dataValueSample(mapped, value(DataType.Int64, [0x0020_0000, 0]), 0);
  t.is(exact.value, 2 ** 53);
  t.deepEqual(exact.metadata, { unit: 'bar' });
  t.deepEqual(mapped.metadata, { unit: 'bar' }, 'the tag metadata is not changed');
  t.like(
    dataValueSample(
      mapped,
      value(DataType.UInt64, [0x0100_0000, 3], StatusCodes.UncertainLastUsableValue),
      0,
    ),
    {
      quality: 'Good',
      value: 2 ** 56,
      metadata: {
        unit: 'bar',
        statusCode: 'UncertainLastUsableValue',
        valueText: '72057594037927939',
      },
    },
  );
});

test('values that cannot be a tag value are Bad DecodeError', (t) => {
  for (const [what, dataValue] of [
    ['NaN', value(DataType.Double, Number.NaN)],
    ['-Infinity', value(DataType.Float, Number.NEGATIVE_INFINITY)],
    ['ByteString', value(DataType.ByteString, Buffer.from([1, 2]))],
    [
      'array',
      new DataValue({
        value: new Variant({
          dataType: DataType.Int32,
          arrayType: VariantArrayType.Array,
          value: [1, 2],
        }),
      }),
    ],
    ['empty', new DataValue({ value: new Variant({ dataType: DataType.Null }) })],
  ] as const) {
    const sample = dataValueSample(mapped, dataValue, 0);
    t.like(sample, { quality: 'Bad', reason: 'DecodeError', value: undefined }, what);
  }
});

test('statuses: Bad with the status name, Uncertain kept as Good with its name', (t) => {
  t.like(dataValueSample(mapped, value(DataType.Double, 1, StatusCodes.BadNodeIdUnknown), 0), {
    quality: 'Bad',
    reason: 'DeviceException',
    message: 'The server reports BadNodeIdUnknown (0x80340000).',
    value: undefined,
  });
  t.like(dataValueSample(mapped, value(DataType.Double, 1, StatusCodes.BadTimeout), 0), {
    quality: 'Bad',
    reason: 'Timeout',
  });
  t.like(dataValueSample(mapped, value(DataType.Double, 1, StatusCodes.BadNoCommunication), 0), {
    quality: 'Unavailable',
    reason: 'Disconnected',
  });
  t.like(
    dataValueSample(mapped, value(DataType.Double, 7, StatusCodes.UncertainSensorNotAccurate), 0),
    {
      quality: 'Good',
      value: 7,
      metadata: { unit: 'bar', statusCode: 'UncertainSensorNotAccurate' },
    },
  );
  t.like(statusSample(mapped, 'BadNotReadable', 0x803a0000, at.toISOString()), {
    quality: 'Bad',
    reason: 'DeviceException',
    message: 'The server reports BadNotReadable (0x803A0000).',
  });
});

/** An endpoint with user name token policies of these security policies ('' = none named). */
function endpoint(
  securityMode: MessageSecurityMode,
  securityPolicyUri: SecurityPolicy,
  tokenPolicies: string[],
  serverCertificate: Buffer = Buffer.from([0x30, 0x82]),
): EndpointDescription {
  return new EndpointDescription({
    securityMode,
    securityPolicyUri,
    serverCertificate,
    userIdentityTokens: [
      { policyId: 'anonymous', tokenType: UserTokenType.Anonymous },
      ...tokenPolicies.map((uri, index) => ({
        policyId: `username_${index}`,
        tokenType: UserTokenType.UserName,
        securityPolicyUri: uri || null,
      })),
    ],
  });
}

test('a password in clear: channel not encrypted and no token encryption (node-opcua choice)', (t) => {
  const { None, Sign, SignAndEncrypt } = MessageSecurityMode;
  const none = SecurityPolicy.None;
  const strong = SecurityPolicy.Basic256Sha256;
  // What node-opcua servers offer on their None endpoint: encrypted tokens.
  t.is(
    clearPasswordReason(endpoint(None, none, [strong, SecurityPolicy.Aes128_Sha256_RsaOaep])),
    undefined,
  );
  // The token policy names none: the channel's policy, None, applies.
  t.regex(clearPasswordReason(endpoint(None, none, [''])) ?? '', /username_0.*does not encrypt/);
  t.regex(clearPasswordReason(endpoint(None, none, [none])) ?? '', /securityMode None/);
  // Offered both, node-opcua takes the strongest: encrypted.
  t.is(clearPasswordReason(endpoint(None, none, [none, strong])), undefined);
  t.is(userNamePolicy(endpoint(None, none, ['', none, strong]))?.policyId, 'username_2');
  // node-opcua ranks Basic256 below None: it would send in clear.
  t.regex(
    clearPasswordReason(endpoint(None, none, [SecurityPolicy.Basic256, none])) ?? '',
    /username_1/,
  );
  // Sign: signed, not encrypted. A token policy naming none uses the channel's: encrypted.
  t.is(clearPasswordReason(endpoint(Sign, strong, [''])), undefined);
  t.regex(clearPasswordReason(endpoint(Sign, strong, [none])) ?? '', /securityMode Sign/);
  // SignAndEncrypt: the channel protects it whatever the token policy.
  t.is(clearPasswordReason(endpoint(SignAndEncrypt, strong, [none])), undefined);
  // No server certificate: node-opcua sends the password as it is.
  t.regex(
    clearPasswordReason(endpoint(None, none, [strong], Buffer.alloc(0))) ?? '',
    /no certificate/,
  );
  // No user name policy at all: nothing to say, the session fails by itself.
  t.is(clearPasswordReason(endpoint(None, none, [])), undefined);
});
