/**
 * The MCP sessions of `/api/v2/Mcp` (Streamable HTTP, JSON answers): one SDK transport and
 * server per session, created by an `initialize` request and named by the `Mcp-Session-Id`
 * header of every request after it.
 *
 * Every request authenticates anew with its Bearer token (the route's access rule), and a
 * session answers only the account that opened it. A session ends when its client deletes it,
 * after {@link mcpSessionIdleMs} without a request, or as soon as the token that opened it stops
 * being valid (revoked, regenerated, the account disabled or its roles changed): the accounts
 * are watched, and each request checks too. Sessions are bounded per account and in all.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { AssistantToolRegistry } from '../../assistant/tool-registry.js';
import type { AccountService, Principal } from '../../auth/account-service.js';
import { ConflictError, NotFoundError, RequestError } from '../../errors.js';
import type { TagStore } from '../../tags/tag-store.js';
import { createMcpServer } from './mcp-server.js';

/** A session without a request for this long ends: 30 minutes. */
export const mcpSessionIdleMs = 30 * 60_000;
/** Most open sessions of one account (409 `limit-reached` beyond). */
export const maxMcpSessionsPerAccount = 10;
/** Most open sessions in all (409 `limit-reached` beyond). */
export const maxMcpSessions = 200;

/** What the sessions need. */
export interface McpSessionsOptions {
  tools: AssistantToolRegistry;
  store: TagStore;
  accounts: Pick<AccountService, 'stillValid' | 'onAccountsChange'>;
  logger: Logger;
  version: string;
  /** Epoch ms now: idle expiry. */
  now: () => number;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  /** The principal that opened it: the session ends when it is no longer valid. */
  principal: Principal;
  lastUsed: number;
}

/** The principal of the request, as the transport passes it to the server's handlers. */
interface AuthExtra {
  authInfo?: { extra?: Record<string, unknown> };
}

/** The open sessions, by id. */
export class McpSessions {
  private readonly sessions = new Map<string, Session>();
  private unwatch: (() => void) | undefined;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly options: McpSessionsOptions) {}

  /** Open sessions now. */
  get size(): number {
    return this.sessions.size;
  }

  /**
   * Answers one request of an authenticated caller: hands it to its session's transport (or to a
   * new session for an `initialize`), which writes the answer itself (`context.respond` false).
   * @throws NotFoundError (an unknown or ended session, or another account's), RequestError
   *   (400: no session and not an initialize request), ConflictError `limit-reached`.
   */
  async handle(context: Context, principal: Principal, token: string): Promise<void> {
    this.sweep();
    const id = context.get('Mcp-Session-Id');
    const body = (context.request as { body?: unknown }).body;
    let session: Session;
    if (id !== '') {
      const found = this.sessions.get(id);
      if (found === undefined || found.principal.user.id !== principal.user.id) {
        throw new NotFoundError('No such MCP session (it ended); initialize a new one.');
      }
      session = found;
    } else {
      if (context.method !== 'POST' || !isInitializeRequest(body)) {
        throw new RequestError(
          'bad-request',
          400,
          'No Mcp-Session-Id header: the first request of a session must be an initialize request.',
        );
      }
      session = await this.open(principal);
    }
    session.lastUsed = this.options.now();
    const request = context.req as IncomingMessage & {
      auth?: { token: string; clientId: string; scopes: string[]; extra: Record<string, unknown> };
    };
    request.auth = { token, clientId: principal.user.username, scopes: [], extra: { principal } };
    context.respond = false;
    await session.transport.handleRequest(request, context.res, body);
  }

  /**
   * Ends the session named by a request refused with 401, if its account's token is indeed no
   * longer valid (a session is never ended on a stranger's word).
   */
  endIfRevoked(id: string): void {
    const session = this.sessions.get(id);
    if (session !== undefined && !this.options.accounts.stillValid(session.principal)) {
      this.end(id, 'token no longer valid');
    }
  }

  /** Ends every session (the daemon stops). */
  async closeAll(): Promise<void> {
    for (const id of [...this.sessions.keys()]) this.end(id, 'shutting down');
    this.unwatch?.();
    this.unwatch = undefined;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private async open(principal: Principal): Promise<Session> {
    const mine = [...this.sessions.values()].filter(
      (session) => session.principal.user.id === principal.user.id,
    ).length;
    if (mine >= maxMcpSessionsPerAccount || this.sessions.size >= maxMcpSessions) {
      throw new ConflictError(
        'limit-reached',
        mine >= maxMcpSessionsPerAccount
          ? `Account ${principal.user.username} has ${maxMcpSessionsPerAccount} MCP sessions open; end one (DELETE with its Mcp-Session-Id) or wait ${mcpSessionIdleMs / 60_000} minutes for an idle one to end.`
          : `${maxMcpSessions} MCP sessions are open; retry later.`,
      );
    }
    this.watch();
    let session: Session | undefined;
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        if (session) this.sessions.set(id, session);
      },
      onsessionclosed: (id) => {
        this.sessions.delete(id);
      },
    });
    session = { transport, principal, lastUsed: this.options.now() };
    const server = createMcpServer(
      {
        tools: this.options.tools,
        store: this.options.store,
        version: this.options.version,
        principalOf: (extra: AuthExtra) => {
          const current = extra.authInfo?.extra?.principal as Principal | undefined;
          // Every request carries its own; the opener's only when the SDK runs a handler
          // outside a request (it does not for these methods).
          return current ?? (session as Session).principal;
        },
      },
      () => transport.sessionId,
    );
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id !== undefined) this.sessions.delete(id);
    };
    await server.connect(transport);
    return session;
  }

  private end(id: string, why: string): void {
    const session = this.sessions.get(id);
    if (session === undefined) return;
    this.sessions.delete(id);
    this.options.logger.info(
      { component: 'mcp', account: session.principal.user.username, why },
      'MCP session ended',
    );
    session.transport.close().catch((error: unknown) => {
      this.options.logger.warn({ err: error }, 'an MCP session did not close cleanly');
    });
  }

  /** Ends the sessions whose token is no longer valid, and the idle ones. */
  private sweep(): void {
    const now = this.options.now();
    for (const [id, session] of this.sessions) {
      if (!this.options.accounts.stillValid(session.principal))
        this.end(id, 'token no longer valid');
      else if (now - session.lastUsed >= mcpSessionIdleMs) this.end(id, 'idle');
    }
  }

  /** Watches the accounts (once a session exists): a revocation ends its sessions at once. */
  private watch(): void {
    if (this.unwatch !== undefined) return;
    this.unwatch = this.options.accounts.onAccountsChange(() => this.sweep());
    // Idle sessions end even when no request comes; the timer never keeps the process alive.
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }
}
