/** The operator actions on alarms, as the Alerts API takes them. */

import { refreshAlerts } from './alarm-feed';
import { api } from './api-client';
import type { AlertView, BulkAcknowledgeResult } from './api-types';

const base = '/api/v2/Alerts';
const named = (name: string, verb: string) => `${base}/${encodeURIComponent(name)}/${verb}`;

/** The body of an action: the comment when one was typed. */
function withComment(comment: string): { comment?: string } {
  const trimmed = comment.trim();
  return trimmed ? { comment: trimmed } : {};
}

async function act(name: string, verb: string, body: unknown): Promise<AlertView> {
  const alarm = await api<AlertView>(named(name, verb), { method: 'POST', body });
  void refreshAlerts();
  return alarm;
}

/** Acknowledges one alarm. @throws ApiError */
export function acknowledge(name: string, comment = ''): Promise<AlertView> {
  return act(name, 'Acknowledge', withComment(comment));
}

/** Acknowledges several alarms in one request; one result per name. @throws ApiError */
export async function acknowledgeMany(
  names: readonly string[],
  comment = '',
): Promise<BulkAcknowledgeResult> {
  const result = await api<BulkAcknowledgeResult>(`${base}/Acknowledge`, {
    method: 'POST',
    body: { names, ...withComment(comment) },
  });
  void refreshAlerts();
  return result;
}

/** How an alarm is shelved. */
export type ShelveRequest =
  | { kind: 'Timed'; durationMinutes: number; reason: string }
  | { kind: 'OneShot'; reason: string };

/** Shelves an alarm. @throws ApiError (field errors at `durationMinutes`, `reason`) */
export function shelve(name: string, request: ShelveRequest): Promise<AlertView> {
  const reason = request.reason.trim();
  return act(name, 'Shelve', {
    kind: request.kind,
    ...(request.kind === 'Timed' ? { durationMinutes: request.durationMinutes } : {}),
    ...(reason ? { reason } : {}),
  });
}

/** Unshelves an alarm. @throws ApiError */
export function unshelve(name: string, comment = ''): Promise<AlertView> {
  return act(name, 'Unshelve', withComment(comment));
}

/** Takes an alarm out of service, or puts it back. @throws ApiError */
export function setInService(name: string, inService: boolean, comment = ''): Promise<AlertView> {
  return act(name, inService ? 'InService' : 'OutOfService', withComment(comment));
}
