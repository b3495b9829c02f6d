import test from 'ava';
import { createLogger, logLevelProblem } from '../src/logger.js';
import { captureLogs } from './helpers/log-capture.js';

test('secrets are masked wherever they appear in a logged object', (t) => {
  const { logger, lines, text } = captureLogs();
  logger.info(
    {
      password: 'hunter2',
      request: { headers: { authorization: 'Bearer abc.def.ghi', cookie: 'session=s3cr3t' } },
      webhook: {
        destinationUrl: 'https://user:pw@example.test/hook',
        bearerToken: 'tok-123',
        apiKeyHeaderValue: 'key-456',
        basicAuthPassword: 'pw-789',
      },
    },
    'configured',
  );
  const output = text();
  for (const secret of [
    'hunter2',
    'abc.def.ghi',
    's3cr3t',
    'user:pw',
    'tok-123',
    'key-456',
    'pw-789',
  ]) {
    t.false(output.includes(secret), `${secret} leaked: ${output}`);
  }
  const line = lines[0] as Record<string, Record<string, unknown>>;
  t.is(line.password as unknown, '********');
  t.is(line.webhook?.bearerToken, '********');
});

test('log lines are JSON with level, ISO time and message', (t) => {
  const { logger, lines } = captureLogs();
  logger.warn({ component: 'x' }, 'hello');
  const line = lines[0];
  t.is(line?.level, 40);
  t.is(line?.msg, 'hello');
  t.regex(String(line?.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});

test('secrets deep in objects, in every spelling of the header names, are masked too', (t) => {
  const { logger, text } = captureLogs();
  logger.info(
    {
      config: { webhook: { authentication: { bearerToken: 'deep-token-1' } } },
      request: { headers: { Authorization: 'Bearer upper-2', 'set-cookie': ['s=cookie-3'] } },
      session: { refreshToken: 'refresh-4', preAuthToken: 'pre-5' },
      body: { currentPassword: 'old-6', newPassword: 'new-7' },
      https: { keyPassphrase: 'pass-8' },
    },
    'deep',
  );
  const output = text();
  for (const secret of [
    'deep-token-1',
    'upper-2',
    'cookie-3',
    'refresh-4',
    'pre-5',
    'old-6',
    'new-7',
    'pass-8',
  ]) {
    t.false(output.includes(secret), `${secret} leaked: ${output}`);
  }
  t.true(output.includes('"msg":"deep"'));
});

test('an empty TAGD_LOG_LEVEL counts as unset: no problem, and the level is info', (t) => {
  t.is(logLevelProblem(''), undefined);
  t.is(logLevelProblem(undefined), undefined);
  t.regex(logLevelProblem('verbose') ?? '', /TAGD_LOG_LEVEL 'verbose' is not a log level/);
  const saved = process.env.TAGD_LOG_LEVEL;
  // Synchronous from here to the restore: no other test of this file runs in between.
  process.env.TAGD_LOG_LEVEL = '';
  try {
    const logger = createLogger({ pretty: false, destination: { write: () => undefined } });
    t.is(logger.level, 'info');
    t.is(createLogger({ level: '', destination: { write: () => undefined } }).level, 'info');
  } finally {
    if (saved === undefined) delete process.env.TAGD_LOG_LEVEL;
    else process.env.TAGD_LOG_LEVEL = saved;
  }
});

test('secrets in arrays and in child bindings are masked; errors still log their message; the object logged is not changed', (t) => {
  const { logger, text, lines } = captureLogs();
  const logged = { brokers: [{ brokerUrl: 'mqtt://u:pw-9@h' }], count: 2 };
  logger.child({ component: 'x', signingSecret: 'sign-10' }).info(logged, 'lists');
  logger.error({ err: new Error('boom 11') }, 'failed');
  const output = text();
  for (const secret of ['pw-9', 'sign-10']) t.false(output.includes(secret), output);
  const [listed, failed] = lines as unknown as [Record<string, unknown>, Record<string, unknown>];
  t.is((listed.brokers as { brokerUrl: string }[])[0]?.brokerUrl, '********');
  t.is((failed.err as { message: string }).message, 'boom 11');
  t.is(logged.brokers[0]?.brokerUrl, 'mqtt://u:pw-9@h', "the caller's object keeps its values");
});
