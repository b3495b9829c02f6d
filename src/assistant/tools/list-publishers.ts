import { z } from 'zod';
import { ForbiddenError } from '../../errors.js';
import { editionsWith, unlicensed } from '../../license/license.js';
import { maskSecrets } from '../../profile/secret-fields.js';
import { mqttConfigSchema } from '../../publishers/mqtt/schema.js';
import { webhookConfigSchema } from '../../publishers/webhook/schema.js';
import type { AssistantDeps } from '../assistant-deps.js';
import { defineTool } from '../assistant-tool.js';

/**
 * The publishers (as `GET /api/v2/Publishers/Webhooks` and `…/Mqtt`): configurations with every
 * secret masked exactly as the API masks them (the same schemas mark the secrets), and states.
 */
export function listPublishersTool(deps: AssistantDeps) {
  return defineTool({
    name: 'listPublishers',
    title: 'List publishers',
    description:
      'Lists the webhook and MQTT publishers with their state (On, Off, Error and why), last delivery and counters, and their configuration with every secret (passwords, tokens, destination URLs with credentials) shown as ********. Needs the data relay feature of the license.',
    permission: 'PublisherView',
    readOnly: true,
    input: z.strictObject({}),
    handle: () => {
      const license = deps.license?.() ?? unlicensed;
      if (!license.features.has('dataRelay')) {
        throw new ForbiddenError(
          `Publishers need the data relay feature of the ${editionsWith('dataRelay').join(' or ')} edition; this installation does not have it.`,
          'feature-unavailable',
        );
      }
      const profile = deps.profile?.current();
      const webhooks = (profile?.publishers.webhooks ?? []).map((config) => ({
        ...maskSecrets(webhookConfigSchema, config),
        state: deps.publishers?.get(config.name) ?? { name: config.name, status: 'Off' },
      }));
      const mqtt = (profile?.publishers.mqtt ?? []).map((config) => ({
        ...maskSecrets(mqttConfigSchema, config),
        state: deps.mqttPublishers?.get(config.name) ?? { name: config.name, status: 'Off' },
      }));
      return { webhooks, mqtt };
    },
  });
}
