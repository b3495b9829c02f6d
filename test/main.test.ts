import test from 'ava';
import {
  ListenerError,
  ProfileFileError,
  ServiceBusyError,
  StateDirLockedError,
  StateDirUnusableError,
} from '../src/errors.js';
import { exitCodes, isConfigError } from '../src/main.js';

test('errors a restart cannot fix are configuration errors (exit 78); the others exit 1', (t) => {
  t.is(exitCodes.config, 78);
  t.true(isConfigError(new ProfileFileError('/c.pem', 'not-a-file', 'FIFO')));
  t.true(isConfigError(new StateDirLockedError('/var/lib/tagd', 42, '/var/lib/tagd/daemon.lock')));
  t.true(
    isConfigError(new StateDirUnusableError('/var/lib/tagd', 'permission denied')),
    'a state directory tagd cannot write stays so after a restart',
  );
  const bind = (code: string) =>
    new ListenerError('Cannot listen', { cause: Object.assign(new Error(code), { code }) });
  t.true(isConfigError(bind('EACCES')), 'a privileged port stays refused after a restart');
  t.false(isConfigError(bind('EADDRINUSE')), 'a port in use may be free after a restart');
  t.false(isConfigError(bind('EADDRNOTAVAIL')), 'an address may come up after a restart');
  t.false(isConfigError(new ServiceBusyError('busy')));
  t.false(isConfigError(new Error('anything else')));
});
