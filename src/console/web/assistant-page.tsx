/**
 * The Assistant page: a chat with tagd's assistant (`/api/v2/Assistant/Conversations`). The
 * answer streams in as it is written; each tool the model called is shown collapsed with its
 * inputs and its answer (a `queryHistory` answer with numbers also as a small chart); a write
 * or acknowledgement the model proposed is a card with Confirm and Reject for an account that
 * may decide it, and disabled with the reason otherwise. Nothing the assistant does is written
 * before a person confirms here (or at `POST /api/v2/Assistant/Proposals/{id}/Confirm`).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { api, failureMessage } from './api-client';
import { type AssistantEvent, sendAssistantMessage } from './assistant-stream';
import { FormError } from './form-error';
import { historySketch, type SketchSample } from './history-sketch';
import { can } from './session';

/** A proposal as the chat announces it (an AssistantProposal). */
interface Proposal {
  id: string;
  kind: 'write' | 'acknowledge';
  fullTagId?: string;
  value?: number | boolean | string;
  alarm?: string;
  reason: string;
  expiresAt: string;
  status: string;
  outcome?: { status?: string; message?: string; reason?: string };
}

type Entry =
  | { kind: 'user'; text: string }
  | { kind: 'answer'; text: string }
  | {
      kind: 'tool';
      id: string;
      name: string;
      arguments: string;
      ok?: boolean;
      result?: unknown;
      error?: { code?: string; message?: string };
    }
  | { kind: 'proposal'; proposal: Proposal }
  | { kind: 'error'; text: string };

/** The chat page. */
export function AssistantPage() {
  const [entries, setEntries] = useState<Entry[]>([]);
  const [draft, setDraft] = useState('');
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState('');
  const conversation = useRef<string | undefined>(undefined);
  const input = useRef<HTMLTextAreaElement>(null);

  const add = (entry: Entry) => setEntries((list) => [...list, entry]);
  const onEvent = ({ event, data }: AssistantEvent) => {
    if (event === 'text') {
      const delta = String(data.delta ?? '');
      setEntries((list) => {
        const last = list[list.length - 1];
        if (last?.kind === 'answer') {
          return [...list.slice(0, -1), { kind: 'answer', text: last.text + delta }];
        }
        return [...list, { kind: 'answer', text: delta }];
      });
    } else if (event === 'tool-call') {
      add({
        kind: 'tool',
        id: String(data.id),
        name: String(data.name),
        arguments: String(data.arguments ?? ''),
      });
    } else if (event === 'tool-result') {
      setEntries((list) =>
        list.map((entry) =>
          entry.kind === 'tool' && entry.id === data.id && entry.ok === undefined
            ? {
                ...entry,
                ok: data.ok === true,
                result: data.result,
                error: data.error as { code?: string; message?: string } | undefined,
              }
            : entry,
        ),
      );
    } else if (event === 'proposal') {
      add({ kind: 'proposal', proposal: data.proposal as unknown as Proposal });
    } else if (event === 'error') {
      add({ kind: 'error', text: String(data.detail ?? data.title ?? 'The assistant failed.') });
    } else if (event === 'end' && data.finishReason === 'max-tool-calls') {
      add({ kind: 'error', text: 'The answer stopped: it reached its limit of tool calls.' });
    }
  };

  const send = async (event: Event) => {
    event.preventDefault();
    const content = draft.trim();
    if (content === '' || busy) return;
    setBusy(true);
    setStatus('The assistant is answering…');
    add({ kind: 'user', text: content });
    setDraft('');
    try {
      if (conversation.current === undefined) {
        const created = await api<{ id: string }>('/api/v2/Assistant/Conversations', {
          method: 'POST',
          body: {},
        });
        conversation.current = created.id;
      }
      await sendAssistantMessage(conversation.current, content, onEvent);
      setStatus('The assistant answered.');
    } catch (error) {
      const text = failureMessage(error);
      add({ kind: 'error', text });
      setStatus('The assistant could not answer.');
    } finally {
      setBusy(false);
      input.current?.focus();
    }
  };

  const restart = () => {
    conversation.current = undefined;
    setEntries([]);
    setStatus('');
  };

  return (
    <section class="panel assistant" aria-labelledby="assistant-title">
      <div class="panel-head">
        <h1 id="assistant-title">Assistant</h1>
        <button type="button" class="button" onClick={restart} disabled={busy}>
          New conversation
        </button>
      </div>
      <p class="hint">
        Answers come from the gateway's data with your own permissions. The assistant cannot write:
        it can only propose a write, which a person with the TagWrite permission confirms here.
      </p>
      {/* Entries are only ever appended (or replaced in place): the index is a stable key. */}
      <ol class="transcript" aria-label="Conversation">
        {entries.map((entry, index) => (
          <li key={index} class={`turn turn-${entry.kind}`}>
            <EntryView entry={entry} />
          </li>
        ))}
      </ol>
      <p role="status" class="muted">
        {status}
      </p>
      <form class="form assistant-form" onSubmit={send}>
        <label for="assistant-question">Ask the assistant</label>
        <textarea
          id="assistant-question"
          ref={input}
          rows={3}
          maxLength={8000}
          value={draft}
          onInput={(event) => setDraft((event.currentTarget as HTMLTextAreaElement).value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && !event.shiftKey) {
              void send(event);
            }
          }}
        />
        <div class="buttons">
          <button type="submit" class="button primary" disabled={busy || draft.trim() === ''}>
            {busy ? 'Answering…' : 'Send'}
          </button>
        </div>
      </form>
    </section>
  );
}

function EntryView({ entry }: { entry: Entry }) {
  switch (entry.kind) {
    case 'user':
      return (
        <p>
          <span class="visually-hidden">You: </span>
          {entry.text}
        </p>
      );
    case 'answer':
      return (
        <p class="answer">
          <span class="visually-hidden">Assistant: </span>
          {entry.text}
        </p>
      );
    case 'tool':
      return <ToolCallView call={entry} />;
    case 'proposal':
      return <ProposalCard initial={entry.proposal} />;
    case 'error':
      return <FormError>{entry.text}</FormError>;
  }
}

function ToolCallView({ call }: { call: Extract<Entry, { kind: 'tool' }> }) {
  const state = call.ok === undefined ? 'running' : call.ok ? 'answered' : 'refused';
  let shownArguments = call.arguments;
  try {
    shownArguments = JSON.stringify(JSON.parse(call.arguments), null, 2);
  } catch {
    // Shown as the model wrote it.
  }
  return (
    <details class="tool-call">
      <summary>
        Tool <code>{call.name}</code> <span class="muted">({state})</span>
      </summary>
      <p class="hint">Input</p>
      {/* Focusable sections: a long text scrolls, and a keyboard must reach it (axe). */}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be focusable */}
      <section class="tool-text" tabIndex={0} aria-label={`Input of ${call.name}, scrollable`}>
        <pre class="mono">{shownArguments}</pre>
      </section>
      {call.ok !== undefined && (
        <>
          <p class="hint">{call.ok ? 'Answer' : 'Refused'}</p>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be focusable */}
          <section class="tool-text" tabIndex={0} aria-label={`Answer of ${call.name}, scrollable`}>
            <pre class="mono">
              {call.ok
                ? JSON.stringify(call.result, null, 2)
                : `${call.error?.code ?? ''}: ${call.error?.message ?? ''}`}
            </pre>
          </section>
        </>
      )}
      {call.ok && call.name === 'queryHistory' && <HistorySketch result={call.result} />}
    </details>
  );
}

/** A queryHistory answer's numbers as a small line chart (see history-sketch.ts for which). */
function HistorySketch({ result }: { result: unknown }) {
  const host = useRef<HTMLDivElement>(null);
  const series = historySketch((result as { values?: SketchSample[] })?.values ?? []);
  useEffect(() => {
    if (!host.current || series === undefined) return undefined;
    const element = host.current;
    const widthOf = () => Math.min(480, Math.max(200, element.clientWidth));
    const chart = new uPlot(
      {
        width: widthOf(),
        height: 140,
        series: [{}, { label: series.tag ?? 'value', stroke: '#1f6feb', width: 2 }],
        legend: { show: false },
      },
      [series.times, series.values],
      element,
    );
    // Follows the turn's width (a rotated phone, a resized window).
    const follow = new ResizeObserver(() => chart.setSize({ width: widthOf(), height: 140 }));
    follow.observe(element);
    return () => {
      follow.disconnect();
      chart.destroy();
    };
  }, [result]);
  if (series === undefined) return null;
  return (
    <figure class="chart assistant-chart">
      <div
        ref={host}
        role="img"
        aria-label={`History of ${series.tag}: ${series.times.length} values`}
      />
      <figcaption class="hint">
        {series.tag}: {series.times.length} values
      </figcaption>
    </figure>
  );
}

function ProposalCard({ initial }: { initial: Proposal }) {
  const [proposal, setProposal] = useState(initial);
  const [error, setError] = useState('');
  const [sending, setSending] = useState(false);
  const permission = proposal.kind === 'write' ? 'TagWrite' : 'AlertAcknowledge';
  const allowed = can(permission);
  const reasonId = `proposal-${proposal.id}-why`;
  const decide = async (action: 'Confirm' | 'Reject') => {
    setSending(true);
    setError('');
    try {
      setProposal(
        await api<Proposal>(
          `/api/v2/Assistant/Proposals/${encodeURIComponent(proposal.id)}/${action}`,
          { method: 'POST' },
        ),
      );
    } catch (failure) {
      setError(failureMessage(failure));
    } finally {
      setSending(false);
    }
  };
  const what =
    proposal.kind === 'write'
      ? `Write ${JSON.stringify(proposal.value)} to ${proposal.fullTagId}`
      : `Acknowledge alarm ${proposal.alarm}`;
  return (
    <article class="card proposal" aria-label={`Proposal: ${what}`}>
      <h2 class="proposal-title">Proposal: {what}</h2>
      <p>
        <span class="muted">Reason given: </span>
        {proposal.reason}
      </p>
      <p class="hint">
        Status: <strong>{proposal.status}</strong>
        {proposal.status === 'Pending' &&
          ` — expires ${new Date(proposal.expiresAt).toLocaleTimeString()}`}
        {proposal.outcome?.message ? ` — ${proposal.outcome.message}` : ''}
      </p>
      {proposal.status === 'Pending' && (
        <div class="buttons">
          <button
            type="button"
            class="button primary"
            disabled={!allowed || sending}
            aria-describedby={allowed ? undefined : reasonId}
            onClick={() => void decide('Confirm')}
          >
            Confirm
          </button>
          <button
            type="button"
            class="button"
            disabled={!allowed || sending}
            aria-describedby={allowed ? undefined : reasonId}
            onClick={() => void decide('Reject')}
          >
            Reject
          </button>
        </div>
      )}
      {!allowed && proposal.status === 'Pending' && (
        <p id={reasonId} class="hint">
          Confirming needs the {permission} permission, which this account does not have: ask
          someone who has it.
        </p>
      )}
      <FormError>{error}</FormError>
    </article>
  );
}
