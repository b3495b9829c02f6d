/**
 * One tool an assistant may call: defined once, served to both the chat and the MCP server by
 * the {@link AssistantToolRegistry} (tool-registry.ts), which checks the permission, validates
 * the input, bounds the output and audits every call.
 */
import type { z } from 'zod';
import type { Principal } from '../auth/account-service.js';
import type { Permission } from '../auth/permissions.js';

/** Where a tool call came from, as the audit names it. */
export type ToolVia = 'chat' | 'mcp';

/** Who calls a tool, and through what. */
export interface ToolCaller {
  /** The account of the chat user or of the MCP client's token: its permissions apply. */
  principal: Principal;
  via: ToolVia;
  /** The chat conversation or the MCP session, for the audit and for proposals. */
  conversationId?: string;
}

/** A tool of the registry. */
export interface AssistantTool<Input = unknown> {
  /** camelCase, unique, e.g. `browseTags`: the name the model calls. */
  name: string;
  /** A short human title (MCP `title`). */
  title: string;
  /**
   * What the tool does and answers, for the model: its bounds included, so it can narrow a
   * request rather than be surprised by a truncated answer.
   */
  description: string;
  /** The input: a strict zod object (unknown keys refused), also published as JSON Schema. */
  input: z.ZodType<Input>;
  /** The permission the caller's account needs; without it the tool is not even listed. */
  permission: Permission;
  /** True for tools that only read; false for those that record a proposal (never a write). */
  readOnly: boolean;
  /**
   * Runs the tool with validated input; returns a JSON value (the registry bounds its size).
   * @throws TagdError for refusals (not found, forbidden, …), answered as tool errors.
   */
  handle(input: Input, caller: ToolCaller): unknown | Promise<unknown>;
}

/** Keeps the input type of a tool while storing tools in one list. */
export function defineTool<Input>(tool: AssistantTool<Input>): AssistantTool {
  return tool as unknown as AssistantTool;
}
