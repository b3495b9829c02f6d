/**
 * Sign-in series, pushed by the sign-in limiter through its {@link SignInMetrics} port. No
 * label names an account or an address: the audit log has those.
 */
import { Counter, type Registry } from 'prom-client';
import type { SignInMetrics } from '../auth/sign-in-limiter.js';

/** Registers `tagd_signin_failures_total` and `tagd_signin_lockouts_total`; returns the port. */
export function registerSignInMetrics(registry: Registry): SignInMetrics {
  const failures = new Counter({
    name: 'tagd_signin_failures_total',
    help: 'Failed sign-in attempts: wrong password or two-factor code, unknown or disabled account.',
    registers: [registry],
  });
  const lockouts = new Counter({
    name: 'tagd_signin_lockouts_total',
    help: 'Times an account (5 failures in 15 min) or a client address (20) reached its limit of failed sign-ins.',
    labelNames: ['scope'],
    registers: [registry],
  });
  // Both scopes appear from the start, so rate() and alerts see a 0 rather than no series.
  const account = lockouts.labels({ scope: 'account' });
  const address = lockouts.labels({ scope: 'address' });
  account.inc(0);
  address.inc(0);
  return {
    failed: () => failures.inc(),
    lockedOut: (scope) => (scope === 'account' ? account : address).inc(),
  };
}
