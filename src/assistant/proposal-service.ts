/**
 * Proposals: what an assistant may do instead of writing. `proposeWrite` (and
 * `proposeAcknowledge`) record a pending action here, in the state directory; nothing reaches a
 * device until a person confirms it (`POST /api/v2/Assistant/Proposals/{id}/Confirm`), and then
 * the write goes through the TagWriter with every check of `POST /api/v2/Tags/Write`, audited
 * with the proposal and both accounts. A proposal not decided within
 * `assistant.proposalExpiryMinutes` (default 5) expires and can no longer be confirmed.
 *
 * Why the bounds: a prompt injection (a tag value, an alarm message telling the model to write)
 * can at most make the model propose; `assistant.writableTags` (default none) bounds what may be
 * proposed at all, the confirmation is a person's (a service account cannot confirm, whatever
 * its roles), and the pending list is bounded so a looping model cannot flood it.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { AlarmService } from '../alarms/alarm-service.js';
import type { Principal } from '../auth/account-service.js';
import type { Permission } from '../auth/permissions.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../errors.js';
import { DurableJsonFile } from '../profile/durable-json-file.js';
import { compileTagPattern } from '../tags/tag-pattern.js';
import type { WriteStatus, WriteValue } from '../tags/tag-write-port.js';
import type { TagWriter } from '../tags/tag-writer.js';
import type { AssistantConfig } from './assistant-config.js';
import type { ToolCaller, ToolVia } from './assistant-tool.js';

/** File of the proposals in the state directory. */
export const proposalsFileName = 'assistant-proposals.json';
/** Most pending proposals of one account (409 `limit-reached` beyond). */
export const maxPendingPerAccount = 20;
/** Most pending proposals of all accounts (409 `limit-reached` beyond). */
export const maxPendingProposals = 200;
/** Decided and expired proposals kept for the list (the oldest go first). */
export const maxDecidedProposals = 500;
/** Longest reason kept, characters. */
export const maxReasonLength = 1000;

/** Where a proposal stands. */
export type ProposalStatus = 'Pending' | 'Confirmed' | 'Rejected' | 'Expired' | 'Failed';

/** A recorded proposal. */
export interface Proposal {
  /** Random, 22 characters (base64url of 16 bytes). */
  id: string;
  /** `write`: a tag value; `acknowledge`: an alarm acknowledgement. */
  kind: 'write' | 'acknowledge';
  /** The tag to write (write). */
  fullTagId?: string;
  /** The value to write (write). */
  value?: WriteValue;
  /** The alarm to acknowledge (acknowledge). */
  alarm?: string;
  /** Why, in the assistant's words (shown to the person who decides). */
  reason: string;
  /** The account the assistant acted for. */
  proposedBy: string;
  via: ToolVia;
  /** The chat conversation or MCP session. */
  conversationId?: string;
  /** ISO 8601 UTC. */
  createdAt: string;
  /** ISO 8601 UTC: after it, the proposal can no longer be confirmed. */
  expiresAt: string;
  status: ProposalStatus;
  /** The account that confirmed or rejected it. */
  decidedBy?: string;
  /** ISO 8601 UTC. */
  decidedAt?: string;
  /**
   * A confirmed write: the TagWriter's outcome (`Good`, `Bad`, `Uncertain`, with its reason);
   * a confirmed acknowledgement: the alarm's new state; `Failed`: why nothing was done.
   */
  outcome?: { status?: WriteStatus; reason?: string; message?: string; state?: string };
}

/** What a proposal asks for. */
export type ProposalRequest =
  | { kind: 'write'; fullTagId: string; value: WriteValue; reason: string }
  | { kind: 'acknowledge'; alarm: string; reason: string };

/** Collaborators of {@link ProposalService}. */
export interface ProposalServiceOptions {
  stateDir: string;
  /** Epoch ms now (the injected clock): expiry. */
  now: () => number;
  audit: Logger;
  logger: Logger;
  /** The `assistant` section in force, read at every proposal and confirmation. */
  config: () => AssistantConfig;
  /** The writer a confirmed write goes through. Absent: confirmations of writes answer 500. */
  writer?: TagWriter;
  /** The alarms an acknowledgement applies to. */
  alarms?: AlarmService;
}

interface ProposalsDocument {
  version: 1;
  proposals: Proposal[];
}

/** The proposals, kept in memory and saved durably at every change. */
export class ProposalService {
  private readonly file: DurableJsonFile<ProposalsDocument>;
  private proposals: Proposal[] = [];

  private constructor(private readonly options: ProposalServiceOptions) {
    this.file = new DurableJsonFile(join(options.stateDir, proposalsFileName));
  }

  /**
   * Loads the proposals saved by a previous run. A file that cannot be read is logged and
   * replaced at the next change: proposals are short-lived, and the daemon must start.
   */
  static async open(options: ProposalServiceOptions): Promise<ProposalService> {
    const service = new ProposalService(options);
    try {
      const document = await service.file.read();
      if (Array.isArray(document?.proposals)) service.proposals = document.proposals;
    } catch (error) {
      if ((error as { code?: string }).code !== 'profile-not-found') {
        options.logger.warn(
          { err: error, file: service.file.file },
          'the assistant proposals file could not be read; starting without proposals',
        );
      }
    }
    return service;
  }

  /**
   * Records a proposal for the caller's account.
   * @throws ForbiddenError when the tag is outside `assistant.writableTags`; ValidationError for
   *   a tag that is not writable at all; NotFoundError for an unknown alarm; ConflictError
   *   `limit-reached` when too many proposals are pending.
   */
  async propose(caller: ToolCaller, request: ProposalRequest): Promise<Proposal> {
    const account = caller.principal.user.username;
    this.expire();
    if (request.kind === 'write') {
      this.requireProposable(request.fullTagId);
      if (this.options.writer?.isWritable(request.fullTagId) !== true) {
        throw new ValidationError(`Tag ${request.fullTagId} cannot be written.`, [
          {
            path: 'fullTagId',
            message: `Tag ${request.fullTagId} is not writable (the profile marks a tag writable and its driver allowWrites).`,
          },
        ]);
      }
    } else if (this.options.alarms?.get(request.alarm) === undefined) {
      throw new NotFoundError(`No alarm named '${request.alarm.slice(0, 128)}' is running.`);
    }
    const pending = this.proposals.filter((proposal) => proposal.status === 'Pending');
    if (
      pending.filter((proposal) => proposal.proposedBy === account).length >= maxPendingPerAccount
    ) {
      throw new ConflictError(
        'limit-reached',
        `Account ${account} has ${maxPendingPerAccount} proposals pending; wait until they are decided or expire.`,
      );
    }
    if (pending.length >= maxPendingProposals) {
      throw new ConflictError(
        'limit-reached',
        `${maxPendingProposals} proposals are pending; wait until they are decided or expire.`,
      );
    }
    const created = this.options.now();
    const expiryMs = this.options.config().proposalExpiryMinutes * 60_000;
    const proposal: Proposal = {
      id: randomBytes(16).toString('base64url'),
      kind: request.kind,
      ...(request.kind === 'write'
        ? { fullTagId: request.fullTagId, value: request.value }
        : { alarm: request.alarm }),
      reason: request.reason.slice(0, maxReasonLength),
      proposedBy: account,
      via: caller.via,
      ...(caller.conversationId !== undefined ? { conversationId: caller.conversationId } : {}),
      createdAt: new Date(created).toISOString(),
      expiresAt: new Date(created + expiryMs).toISOString(),
      status: 'Pending',
    };
    this.proposals.push(proposal);
    await this.save();
    this.options.audit.info(
      { event: 'assistant-proposal-created', ...auditedProposal(proposal) },
      `assistant proposal created: ${proposal.id}`,
    );
    return { ...proposal };
  }

  /**
   * The proposals an account may see: those it may decide (writes with TagWrite,
   * acknowledgements with AlertAcknowledge) and those made for it; newest first.
   */
  list(principal: Principal): Proposal[] {
    this.expire();
    return this.proposals
      .filter((proposal) => this.visible(proposal, principal))
      .reverse()
      .map((proposal) => ({ ...proposal }));
  }

  /** One proposal the account may see. @throws NotFoundError */
  get(id: string, principal: Principal): Proposal {
    this.expire();
    const proposal = this.proposals.find((candidate) => candidate.id === id);
    if (proposal === undefined || !this.visible(proposal, principal)) throw notFound(id);
    return { ...proposal };
  }

  /**
   * A person confirms: the write goes through the TagWriter under the person's account (its
   * checks, its rate limit), or the alarm is acknowledged in the person's name.
   * @throws ForbiddenError (a service account, a missing permission, a tag no longer in
   *   writableTags), ConflictError `proposal-not-pending`, and what a write or acknowledgement
   *   through the API would throw (ValidationError, TooManyRequestsError, …).
   */
  async confirm(id: string, principal: Principal): Promise<Proposal> {
    const proposal = this.decidable(id, principal);
    const person = principal.user.username;
    const decided = () => {
      proposal.decidedBy = person;
      proposal.decidedAt = new Date(this.options.now()).toISOString();
    };
    if (proposal.kind === 'write') {
      const fullTagId = proposal.fullTagId as string;
      const value = proposal.value as WriteValue;
      try {
        // The profile may have changed since the proposal: the bound applies at confirmation.
        this.requireProposable(fullTagId);
      } catch (error) {
        await this.fail(proposal, decided, error as Error);
        throw error;
      }
      const writer = this.options.writer;
      if (writer === undefined) throw new Error('Confirming a write needs the tag writer.');
      // Taken out of Pending before the write's first await: a second confirmation is refused.
      proposal.status = 'Confirmed';
      decided();
      let outcomes: Awaited<ReturnType<TagWriter['write']>>;
      try {
        outcomes = await writer.write(person, [{ fullTagId, value }], {
          proposal: proposal.id,
          proposedBy: proposal.proposedBy,
          via: `assistant-${proposal.via}`,
        });
      } catch (error) {
        if ((error as { status?: number }).status === 429) {
          // Nothing was written and nothing is wrong with the proposal: it may be confirmed again.
          proposal.status = 'Pending';
          delete proposal.decidedBy;
          delete proposal.decidedAt;
          throw error;
        }
        await this.fail(proposal, () => undefined, error as Error);
        throw error;
      }
      const outcome = outcomes[0];
      proposal.outcome = {
        ...(outcome?.status !== undefined ? { status: outcome.status } : {}),
        ...(outcome?.reason !== undefined ? { reason: outcome.reason } : {}),
        ...(outcome?.message !== undefined ? { message: outcome.message } : {}),
      };
    } else {
      const alarms = this.options.alarms;
      if (alarms === undefined) throw new Error('Confirming an acknowledgement needs the alarms.');
      try {
        const view = alarms.acknowledge(proposal.alarm as string, {
          account: person,
          comment: `Proposed by the assistant for ${proposal.proposedBy}: ${proposal.reason}`.slice(
            0,
            1000,
          ),
        });
        proposal.status = 'Confirmed';
        decided();
        proposal.outcome = { state: view.state };
        this.options.audit.info(
          {
            event: 'alarm-acknowledged',
            alarm: proposal.alarm,
            username: person,
            proposal: proposal.id,
            proposedBy: proposal.proposedBy,
            state: view.state,
          },
          `alarm-acknowledged: ${proposal.alarm}`,
        );
      } catch (error) {
        await this.fail(proposal, decided, error as Error);
        throw error;
      }
    }
    await this.save();
    this.options.audit.info(
      { event: 'assistant-proposal-confirmed', ...auditedProposal(proposal) },
      `assistant proposal confirmed: ${proposal.id}`,
    );
    return { ...proposal };
  }

  /** A person rejects: nothing is done. @throws as {@link confirm}'s checks. */
  async reject(id: string, principal: Principal): Promise<Proposal> {
    const proposal = this.decidable(id, principal);
    proposal.status = 'Rejected';
    proposal.decidedBy = principal.user.username;
    proposal.decidedAt = new Date(this.options.now()).toISOString();
    await this.save();
    this.options.audit.info(
      { event: 'assistant-proposal-rejected', ...auditedProposal(proposal) },
      `assistant proposal rejected: ${proposal.id}`,
    );
    return { ...proposal };
  }

  /** The pending proposal `id` if `principal` may decide it. */
  private decidable(id: string, principal: Principal): Proposal {
    this.expire();
    const proposal = this.proposals.find((candidate) => candidate.id === id);
    if (proposal === undefined || !this.visible(proposal, principal)) throw notFound(id);
    if (principal.user.kind === 'service') {
      throw new ForbiddenError(
        'A proposal is decided by a person: a service account cannot confirm or reject one.',
      );
    }
    const needed = neededPermission(proposal);
    if (!principal.permissions.has(needed)) {
      throw new ForbiddenError(`Deciding this proposal needs the ${needed} permission.`);
    }
    if (proposal.status !== 'Pending') {
      throw new ConflictError(
        'proposal-not-pending',
        `Proposal ${proposal.id} is ${proposal.status}; nothing was done.`,
      );
    }
    return proposal;
  }

  private visible(proposal: Proposal, principal: Principal): boolean {
    return (
      proposal.proposedBy === principal.user.username ||
      principal.permissions.has(neededPermission(proposal))
    );
  }

  /** @throws ForbiddenError when the tag is outside `assistant.writableTags`. */
  private requireProposable(fullTagId: string): void {
    const patterns = this.options.config().writableTags;
    if (patterns.some((pattern) => compileTagPattern(pattern)(fullTagId))) return;
    throw new ForbiddenError(
      patterns.length === 0
        ? `An assistant may not propose writes: the profile's assistant.writableTags is empty.`
        : `Tag ${fullTagId} is not in the profile's assistant.writableTags: an assistant may not propose a write to it.`,
    );
  }

  private async fail(proposal: Proposal, decided: () => void, error: Error): Promise<void> {
    proposal.status = 'Failed';
    decided();
    proposal.outcome = { message: error.message.slice(0, 1000) };
    await this.save();
    this.options.audit.info(
      { event: 'assistant-proposal-failed', ...auditedProposal(proposal) },
      `assistant proposal failed: ${proposal.id}`,
    );
  }

  /** Marks overdue proposals Expired and drops the oldest decided ones beyond the bound. */
  private expire(): void {
    const now = this.options.now();
    let changed = false;
    for (const proposal of this.proposals) {
      if (proposal.status === 'Pending' && Date.parse(proposal.expiresAt) <= now) {
        proposal.status = 'Expired';
        changed = true;
        this.options.audit.info(
          { event: 'assistant-proposal-expired', ...auditedProposal(proposal) },
          `assistant proposal expired: ${proposal.id}`,
        );
      }
    }
    let decided = this.proposals.filter((proposal) => proposal.status !== 'Pending').length;
    if (decided > maxDecidedProposals) {
      this.proposals = this.proposals.filter(
        (proposal) => proposal.status === 'Pending' || decided-- <= maxDecidedProposals,
      );
      changed = true;
    }
    if (changed) {
      this.save().catch((error: unknown) =>
        this.options.logger.error({ err: error }, 'the assistant proposals could not be saved'),
      );
    }
  }

  private save(): Promise<void> {
    return this.file.write({ version: 1, proposals: this.proposals });
  }
}

/** The permission that decides a proposal. */
export function neededPermission(proposal: Pick<Proposal, 'kind'>): Permission {
  return proposal.kind === 'write' ? 'TagWrite' : 'AlertAcknowledge';
}

function notFound(id: string): NotFoundError {
  return new NotFoundError(`No proposal '${id.slice(0, 64)}'.`);
}

/** A proposal's audit fields: everything but its status history. */
function auditedProposal(proposal: Proposal): Record<string, unknown> {
  return {
    proposal: proposal.id,
    kind: proposal.kind,
    proposedBy: proposal.proposedBy,
    via: proposal.via,
    ...(proposal.conversationId !== undefined ? { conversationId: proposal.conversationId } : {}),
    ...(proposal.fullTagId !== undefined ? { fullTagId: proposal.fullTagId } : {}),
    ...(proposal.value !== undefined ? { value: proposal.value } : {}),
    ...(proposal.alarm !== undefined ? { alarm: proposal.alarm } : {}),
    reason: proposal.reason.slice(0, 200),
    status: proposal.status,
    ...(proposal.decidedBy !== undefined ? { decidedBy: proposal.decidedBy } : {}),
    ...(proposal.outcome !== undefined ? { outcome: proposal.outcome } : {}),
  };
}
