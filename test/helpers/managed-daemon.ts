import type { ExecutionContext } from 'ava';
import { adminToken, type DemoDaemonOptions, demoDaemon } from './demo-daemon.js';

/** A JSON answer body. */
export type Json = Record<string, unknown>;

/**
 * A demo daemon (simulator `Demo`, CAN replay `Vehicle`) and a client with an admin token.
 * @param profile changes the demo profile before it is written (as {@link demoDaemon}'s).
 */
export async function managedDaemon(t: ExecutionContext, profile?: DemoDaemonOptions['profile']) {
  const demo = await demoDaemon(t, profile === undefined ? {} : { profile });
  const admin = await adminToken(demo.url, demo.stateDir);
  const request = async (
    path: string,
    options: { method?: string; body?: unknown; token?: string } = {},
  ) => {
    const response = await fetch(`${demo.url}${path}`, {
      method: options.method ?? 'GET',
      headers: {
        Authorization: `Bearer ${options.token ?? admin}`,
        ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, json: (text ? JSON.parse(text) : undefined) as Json };
  };
  // An Operators account with a service token: it holds DriverView but not DriverManage.
  await request('/api/v2/Users', {
    method: 'POST',
    body: { username: 'ops', service: true, roles: ['Operators'] },
  });
  const operator = (await request('/api/v2/Users/ops/Token', { method: 'POST' })).json
    .token as string;
  return { ...demo, admin, operator, request };
}
