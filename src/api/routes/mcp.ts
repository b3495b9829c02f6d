/**
 * `/api/v2/Mcp`: the Model Context Protocol server (Streamable HTTP, JSON answers) over the
 * assistant tool registry (src/assistant/), for desktop assistants and agents. Any valid Bearer
 * token opens a session (a service account is the usual client); its tools are those its
 * account's permissions allow. Off unless the profile's `assistant.mcp.enabled` says otherwise:
 * by default it answers connections to a loopback address only (the local listener), never the
 * plant network.
 */
import type { Context } from 'koa';
import { type AssistantConfig, defaultAssistantConfig } from '../../assistant/assistant-config.js';
import { AssistantToolRegistry } from '../../assistant/tool-registry.js';
import { NotFoundError, UnauthorizedError } from '../../errors.js';
import type { ApiDeps } from '../api-deps.js';
import { isLoopbackAddress } from '../loopback-peer.js';
import { McpSessions } from '../mcp/mcp-sessions.js';
import { defineRoute, type RouteDefinition } from '../route.js';

const path = '/api/v2/Mcp';
const tag = 'Assistant';

const description =
  'The Model Context Protocol (2025-06-18 and earlier versions the SDK speaks), Streamable HTTP transport with JSON answers: POST JSON-RPC messages (the first an `initialize`, answered with an `Mcp-Session-Id` header that every later request sends), DELETE to end the session. GET (a server-to-client event stream) is not offered (405). Every request needs a Bearer token in the Authorization header (a browser session cookie is not accepted), and a session answers only the account that opened it; it ends when the token is revoked, after 30 minutes idle, or at DELETE. Tools are the assistant tools the account’s permissions allow (a Viewer gets no `proposeWrite`); a refused call is a tool result with `isError`. Answers 404 when the profile’s `assistant.mcp.enabled` keeps MCP off for this connection (default: on for connections to a loopback address only).';

/** Whether MCP answers this connection. */
function mcpEnabled(config: AssistantConfig, context: Context): boolean {
  const enabled = config.mcp.enabled;
  if (enabled !== undefined) return enabled;
  // The address the client connected to: the local listener, not the plant-network one.
  return isLoopbackAddress(context.req.socket.localAddress);
}

/** The MCP endpoint; the sessions are the routes' state (see {@link McpSessions}). */
export function mcpRoutes(deps: ApiDeps, tools: AssistantToolRegistry): RouteDefinition[] {
  const sessions = new McpSessions({
    tools,
    store: deps.store,
    accounts: deps.accounts,
    logger: deps.logger.child({ component: 'mcp' }),
    version: deps.version,
    now: deps.now ?? Date.now,
  });
  const handle = async ({
    context,
    principal,
  }: {
    context: Context;
    principal: Parameters<McpSessions['handle']>[1] | undefined;
  }): Promise<undefined> => {
    if (!principal) throw new Error('unreachable: the route requires a token');
    const config = deps.profile?.current().assistant ?? defaultAssistantConfig;
    if (!mcpEnabled(config, context)) {
      throw new NotFoundError(
        'The MCP server is off for this connection (profile assistant.mcp.enabled).',
      );
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(context.req.headers.authorization ?? '');
    if (!match?.[1]) {
      throw new UnauthorizedError(
        'The MCP server takes a Bearer token in the Authorization header.',
      );
    }
    await sessions.handle(context, principal, match[1]);
    return undefined;
  };
  const common = {
    path,
    tag,
    access: { kind: 'token', types: ['access', 'service'] } as const,
    description,
    problems: [400, 404, 409],
    onUnauthorized: (context: Context) => {
      const id = context.get('Mcp-Session-Id');
      if (id !== '') sessions.endIfRevoked(id);
    },
    handle,
  };
  return [
    defineRoute({
      ...common,
      method: 'post',
      operationId: 'postMcpMessage',
      summary: 'Send an MCP JSON-RPC message (Streamable HTTP)',
      responses: {
        200: { description: 'The JSON-RPC answer (202 without a body for a notification).' },
      },
    }),
    defineRoute({
      ...common,
      method: 'delete',
      operationId: 'deleteMcpSession',
      summary: 'End an MCP session',
      responses: { 200: { description: 'The session ended.' } },
    }),
  ];
}

/** The registry the API serves: the deps', or one built on the deps. */
export function assistantRegistryOf(deps: ApiDeps): AssistantToolRegistry {
  return deps.assistantTools ?? new AssistantToolRegistry(deps);
}
