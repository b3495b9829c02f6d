/**
 * The Monitoring section of docs/operations.md against a real promtool (Debian package `prometheus`): the
 * alert rules it shows are config/prometheus/tagd-alerts.yml, they are valid, and they fire as
 * the page says; its prometheus.yml for a Prometheus on the gateway is a valid configuration.
 */
import { execFile } from 'node:child_process';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { prometheusSkipReason, promtoolPath } from '../helpers/prometheus.js';
import { tempDir } from '../helpers/temp-dir.js';

const run = promisify(execFile);
const rulesFile = new URL('../../config/prometheus/tagd-alerts.yml', import.meta.url);
const operations = new URL('../../docs/operations.md', import.meta.url);

/** The fenced yaml blocks of the Monitoring section of docs/operations.md, in order. */
async function monitoringYaml(): Promise<string[]> {
  const text = await readFile(operations, 'utf8');
  const start = text.indexOf('\n## Monitoring\n');
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end);
  return [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1] as string);
}

const skipReason = prometheusSkipReason();
const promtoolTest = skipReason ? test.skip : test;

test('docs/operations.md shows config/prometheus/tagd-alerts.yml as it is', async (t) => {
  const blocks = await monitoringYaml();
  t.true(blocks.includes(await readFile(rulesFile, 'utf8')));
});

promtoolTest('promtool accepts the alert rules', async (t) => {
  const { stdout } = await run(promtoolPath, ['check', 'rules', rulesFile.pathname]);
  t.regex(stdout, /SUCCESS: 2 rules found/);
});

promtoolTest('the alerts fire after 5 minutes reconnecting and 2 minutes in Error', async (t) => {
  const folder = await tempDir(t);
  await copyFile(rulesFile, join(folder, 'tagd-alerts.yml'));
  const driver =
    'tagd_driver_state{instance="ipc1:8443",job="tagd",driver="Boiler1",type="modbus",state="Reconnecting"}';
  const publisher =
    'tagd_publisher_status{instance="ipc1:8443",job="tagd",publisher="mes",type="webhook",status="Error"}';
  // One sample a minute: reconnecting from minute 1 on; the publisher in Error at minutes 1-2
  // (a lost batch, no alert) and again from minute 5 on.
  const tests = `rule_files: [tagd-alerts.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: '${driver}'
        values: '0 1 1 1 1 1 1 1 1 1'
      - series: '${publisher}'
        values: '0 1 1 0 0 1 1 1 1 1'
    alert_rule_test:
      - eval_time: 5m
        alertname: TagdDriverReconnecting
        exp_alerts: []
      - eval_time: 6m
        alertname: TagdDriverReconnecting
        exp_alerts:
          - exp_labels: { severity: warning, instance: "ipc1:8443", job: tagd, driver: Boiler1, type: modbus, state: Reconnecting }
            exp_annotations:
              summary: "tagd driver Boiler1 on ipc1:8443 has been reconnecting for 5 minutes"
              description: "Its tags are Unavailable. GET /api/v2/Drivers/Boiler1 says why (message, lastError)."
      - eval_time: 3m
        alertname: TagdPublisherError
        exp_alerts: []
      - eval_time: 7m
        alertname: TagdPublisherError
        exp_alerts:
          - exp_labels: { severity: warning, instance: "ipc1:8443", job: tagd, publisher: mes, type: webhook, status: Error }
            exp_annotations:
              summary: "tagd publisher mes on ipc1:8443 is in Error"
              description: "It delivers nothing: its deliveries fail, or it could not start (a file it names cannot be used). The tagd log and the reason in its state (GET /api/v2/Publishers/Webhooks/mes, or Publishers/Mqtt/… for type mqtt) say why."
`;
  const testFile = join(folder, 'tagd-alerts.test.yml');
  await writeFile(testFile, tests);
  const result = await run(promtoolPath, ['test', 'rules', testFile]).catch(
    (error: { stdout?: string; stderr?: string }) => error,
  );
  t.regex(result.stdout ?? '', /SUCCESS/, `${result.stdout}\n${result.stderr}`);
});

promtoolTest(
  "docs/operations.md's prometheus.yml for a Prometheus on the gateway is valid",
  async (t) => {
    const folder = await tempDir(t);
    const [config] = await monitoringYaml();
    t.truthy(config?.includes('scrape_configs:'));
    await writeFile(join(folder, 'prometheus.yml'), config as string);
    await copyFile(rulesFile, join(folder, 'tagd-alerts.yml'));
    const { stdout } = await run(promtoolPath, ['check', 'config', join(folder, 'prometheus.yml')]);
    t.regex(stdout, /SUCCESS/);
  },
);
