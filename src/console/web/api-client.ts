/**
 * The console's one way to the API: same-origin fetch with the session cookies, the CSRF
 * double-submit header on unsafe methods, problem documents turned into {@link ApiError}, and
 * one renewal attempt when the access cookie has expired before the session is declared over.
 */
import type { Problem } from './api-types';

/** A failed API call with its problem document. */
export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail ?? problem.title ?? `HTTP ${problem.status}`);
  }

  /** HTTP status. */
  get status(): number {
    return this.problem.status;
  }

  /** Field path → message, from the problem's `errors[]` (the first message per field). */
  fieldErrors(): Record<string, string> {
    const fields: Record<string, string> = {};
    for (const error of this.problem.errors ?? []) fields[error.path] ??= error.message;
    return fields;
  }
}

/** What a failed call says to the user: the API's message, or that the gateway did not answer. */
export function failureMessage(error: unknown): string {
  return error instanceof ApiError ? error.message : 'The gateway could not be reached.';
}

/** Options of {@link api}. */
export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  body?: unknown;
  /** A pre-auth token (password change) sent as Bearer instead of the cookies. */
  bearer?: string;
  /** Do not renew the session on 401 (sign-in and renewal themselves). */
  noRenew?: boolean;
}

const csrfCookie = 'tagd_csrf';

/** The CSRF token the server set as a readable cookie at sign-in. */
export function csrfToken(): string {
  for (const part of document.cookie.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === csrfCookie) return decodeURIComponent(rest.join('='));
  }
  return '';
}

/** How a renewal went: a new access cookie, refused (the sign-in is over), or no answer. */
export type RenewOutcome = 'renewed' | 'refused' | 'unreachable';

let renewing: Promise<RenewOutcome> | undefined;
let onSessionEnded: () => void = () => undefined;

/** Registers what happens when the session cannot be renewed (back to sign-in). */
export function setSessionEndedHandler(handler: () => void): void {
  onSessionEnded = handler;
}

/** Declares the session over (a renewal was refused): the console returns to sign-in. */
export function endSession(): void {
  onSessionEnded();
}

/**
 * `GET /api/v2/Users/Refresh` with the refresh cookie: a new access cookie and a rotated refresh
 * cookie, and the account's sign-in answer. A refresh token works once, so two renewals with the
 * same one would look like a replay and end the sign-in: renewals are single-flight in this page
 * and, through the Web Locks API (secure contexts: HTTPS and loopback), across the console's
 * tabs; a tab that waited sends the cookie the other one just received.
 */
export async function refreshSession(): Promise<Response> {
  const call = () => fetch('/api/v2/Users/Refresh', { credentials: 'same-origin' });
  const locks = (navigator as Navigator & { locks?: LockManager }).locks;
  return locks ? await locks.request('tagd-session-renewal', call) : call();
}

let replacing: Promise<unknown> | undefined;
let replacements = 0;

/**
 * Runs a call that replaces this browser's session (a password change, two-factor enrolment or
 * removal): the server voids every token of the account and answers new cookies. A stream or
 * request cut by the voiding meanwhile renews after the call, with the new cookies; renewing with
 * the old ones would be refused and end the session the call has just renewed.
 */
export async function replacingSession<T>(call: () => Promise<T>): Promise<T> {
  replacements += 1;
  const running = call();
  const settled = running.catch(() => undefined);
  replacing = settled;
  try {
    return await running;
  } finally {
    if (replacing === settled) replacing = undefined;
  }
}

/** Renews the access cookie (see {@link refreshSession}); single-flight within the page. */
export function renewSession(): Promise<RenewOutcome> {
  renewing ??= renewAfterReplacement().finally(() => {
    renewing = undefined;
  });
  return renewing;
}

async function renewAfterReplacement(): Promise<RenewOutcome> {
  const attempt = async (): Promise<RenewOutcome> => {
    await replacing;
    try {
      return (await refreshSession()).ok ? 'renewed' : 'refused';
    } catch {
      return 'unreachable';
    }
  };
  const before = replacements;
  const outcome = await attempt();
  // Refused with the cookies a replacement has since replaced: once more with the new ones.
  return outcome === 'refused' && (replacing !== undefined || replacements !== before)
    ? attempt()
    : outcome;
}

/** Calls the API; resolves with the parsed JSON body (undefined for 204). @throws ApiError */
export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const response = await send(path, options);
  if (response.status === 401 && !options.noRenew && !options.bearer) {
    if ((await renewSession()) === 'renewed') {
      const retried = await send(path, options);
      if (retried.status !== 401) return parse<T>(retried);
    }
    onSessionEnded();
  }
  return parse<T>(response);
}

/**
 * Saves what a form edits: `PUT <collection>/<name>` when it edits the item named `existing`,
 * `POST <collection>` when it creates one. @throws ApiError
 */
export function saveItem<T>(
  collection: string,
  existing: string | undefined,
  body: unknown,
): Promise<T> {
  return existing === undefined
    ? api<T>(collection, { method: 'POST', body })
    : api<T>(`${collection}/${encodeURIComponent(existing)}`, { method: 'PUT', body });
}

function send(path: string, options: RequestOptions): Promise<Response> {
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  if (options.bearer) headers.Authorization = `Bearer ${options.bearer}`;
  else if (method !== 'GET') headers['X-CSRF-Token'] = csrfToken();
  return fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
}

async function parse<T>(response: Response): Promise<T> {
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const problem = (body ?? {}) as Partial<Problem>;
    throw new ApiError({ ...problem, status: response.status });
  }
  return body as T;
}

/** Encodes a tag path or name for a URL path (slashes kept as separators where wanted). */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}
