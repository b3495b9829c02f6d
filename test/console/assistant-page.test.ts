/**
 * The console's Assistant page in headless Chromium against an in-process demo daemon whose
 * `assistant.model` is a scripted loopback chat-completions peer (test/helpers/openai-peer.ts):
 * a question, the answer streamed in, a tool call shown collapsed with its input and answer, a
 * proposal card confirmed by the administrator (only then the Setpoint is written), and axe
 * clean at 1366×768 and 390 px wide.
 */
import test from 'ava';
import { expectAccessible, wait } from '../helpers/console-session.js';
import { consoleSuite } from '../helpers/console-suite.js';
import { type OpenAiPeer, startOpenAiPeer } from '../helpers/openai-peer.js';
import { until } from '../helpers/until.js';

const setpoint = 'Demo/Controls/Setpoint';

let peer: OpenAiPeer | undefined;

const suite = consoleSuite('assistant-page.test.ts', 'the console Assistant page in Chromium', {
  before: async () => {
    peer = await startOpenAiPeer();
  },
  edit: (profile) => {
    profile.assistant = {
      ...(profile.assistant as Record<string, unknown> | undefined),
      writableTags: [setpoint],
      model: { baseUrl: (peer as OpenAiPeer).baseUrl, model: 'llama3.1' },
    };
  },
  after: async () => {
    await peer?.close();
  },
});

if (suite) {
  test.serial(
    'a question is answered as it streams, the tool call shows collapsed, and the proposal is written only once the administrator confirms it',
    async (t) => {
      t.timeout(180_000);
      const chat = peer as OpenAiPeer;
      const { daemon } = suite.gateway();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      chat.script(
        {
          text: ['Let me read ', 'the setpoint.'],
          gate,
          toolCalls: [
            {
              id: 'call_history',
              name: 'queryHistory',
              arguments: ['{"source":"Demo/Line1/**","start":"now-1h","stop":"now"}'],
            },
            {
              id: 'call_read',
              name: 'readSamples',
              arguments: ['{"fullTagIds":', `["${setpoint}"]}`],
            },
          ],
        },
        {
          toolCalls: [
            {
              id: 'call_propose',
              name: 'proposeWrite',
              arguments: [`{"fullTagId":"${setpoint}","value":42,`, '"reason":"you asked for 42"}'],
            },
          ],
        },
        { text: ['I proposed writing 42. ', 'Please confirm it.'] },
      );
      const page = await suite.adminPage(t);
      // Two numeric values of one simulated line tag are in the history before the question
      // (what the chart needs); any four values of any tags were not enough on a slow machine.
      const history = daemon.history;
      await until(
        async () => {
          if (history === undefined) return false;
          const samples = await history.raw({
            tagIds: await history.resolve('Demo/Line1/**'),
            startMs: 0,
            stopMs: Date.now() + 60_000,
            limit: 1000,
          });
          const perTag = new Map<string, number>();
          for (const sample of samples) {
            if (typeof sample.value !== 'number') continue;
            perTag.set(sample.fullTagId, (perTag.get(sample.fullTagId) ?? 0) + 1);
          }
          return [...perTag.values()].some((count) => count >= 2);
        },
        'the demo history holds two values of one line tag',
        60_000,
        200,
      );
      await page.getByRole('link', { name: 'Assistant' }).click(wait);
      await page.getByRole('heading', { name: 'Assistant' }).waitFor(wait);
      await expectAccessible(t, page, 'assistant page, empty, 1366x768');

      const before = daemon.store?.get(setpoint)?.value;
      t.not(before, 42);
      await page.getByLabel('Ask the assistant').fill('Set the setpoint to 42', wait);
      await page.getByRole('button', { name: 'Send' }).click(wait);
      // The first piece shows while the model still holds the rest back: streamed.
      const answer = page.locator('.turn-answer').first();
      await answer.getByText('Let me read', { exact: false }).waitFor(wait);
      t.is((await answer.textContent())?.includes('the setpoint.'), false);
      release();

      const readCall = page.locator('details.tool-call').filter({ hasText: 'readSamples' });
      await readCall.getByText('(answered)').waitFor(wait);
      t.is(await readCall.getAttribute('open'), null, 'collapsed');
      await readCall.locator('summary').click(wait);
      await readCall.getByText(`"${setpoint}"`, { exact: false }).first().waitFor(wait);

      // The history answer's numbers as a small chart.
      const historyCall = page.locator('details.tool-call').filter({ hasText: 'queryHistory' });
      await historyCall.getByText('(answered)').waitFor(wait);
      await historyCall.locator('summary').click(wait);
      await historyCall.locator('figure.assistant-chart canvas').waitFor(wait);

      const card = page.getByRole('article', { name: `Proposal: Write 42 to ${setpoint}` });
      await card.waitFor(wait);
      await card.getByText('Pending').waitFor(wait);
      await page.getByText('Please confirm it.', { exact: false }).waitFor(wait);
      t.is(daemon.store?.get(setpoint)?.value, before, 'nothing written before the confirmation');
      await expectAccessible(t, page, 'assistant page, answered, 1366x768');

      await page.setViewportSize({ width: 390, height: 844 });
      await expectAccessible(t, page, 'assistant page, answered, 390px');
      const overflow = (await page.evaluate(
        '(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)()',
      )) as number;
      t.true(overflow <= 0, `no sideways scrolling at 390 px (${overflow} px over)`);
      await page.setViewportSize({ width: 1366, height: 768 });

      await card.getByRole('button', { name: 'Confirm' }).click(wait);
      await card.getByText('Confirmed').waitFor(wait);
      t.is(daemon.store?.get(setpoint)?.value, 42);
      // What went to the model: the tool result as a tool message.
      const second = chat.requests[1]?.body.messages ?? [];
      t.is(second.at(-1)?.role, 'tool');
      t.is(second.at(-1)?.tool_call_id, 'call_read');
    },
  );
}
