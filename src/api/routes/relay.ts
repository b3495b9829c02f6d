/**
 * The tag relay routes: the drivers that relay other gateways' tags through a broker (a
 * Sparkplug B host application, the generic MQTT subscriber) and the edge nodes a Sparkplug host
 * has seen (docs/relay.md). Read-only, for DriverView. Like every publisher route they need the
 * data relay feature of the license: without it they answer 403 `feature-unavailable` (the relay
 * drivers do not run then; `GET /api/v2/Drivers` lists them in Error saying why).
 */
import { z } from 'zod';
import { NotFoundError } from '../../errors.js';
import { unlicensed } from '../../license/license.js';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';
import { requireDataRelay } from './publisher-management.js';

const iso = (what: string) => z.string().describe(`${what}, ISO 8601 UTC.`);

const relayDriverSchema = z
  .object({
    name: z.string().describe('Component name: the first segment of its tags.'),
    type: z.string().describe('`sparkplug` (Sparkplug B host application) or `mqtt`.'),
    state: z.enum(['Running', 'Reconnecting', 'Stopped', 'Failed']).describe('As the Drivers API.'),
    since: iso('When the driver entered its state'),
    message: z.string().optional().describe('Why the driver is in its state.'),
    tagCount: z.int().describe('Tags the driver relays.'),
    nodes: z
      .object({
        total: z.int(),
        online: z.int(),
        stale: z.int(),
        catchingUp: z.int().describe('Nodes forwarding stored (is_historical) data now.'),
      })
      .optional()
      .describe('Sparkplug: the edge nodes seen since the driver started.'),
    sequenceErrors: z.int().optional().describe('Sparkplug: seq gaps over every node.'),
    rebirthsRequested: z.int().optional().describe('Sparkplug: rebirth requests sent.'),
  })
  .meta({ id: 'RelayDriver' });

const relayDeviceSchema = z
  .object({
    deviceId: z.string(),
    online: z.boolean().describe('Between its DBIRTH and its DDEATH (or its node’s death).'),
    since: iso('When `online` last changed'),
    lastBirth: iso('When its last DBIRTH arrived').optional(),
    tagCount: z.int(),
  })
  .meta({ id: 'RelayDevice' });

const relayNodeSchema = z
  .object({
    groupId: z.string(),
    edgeNodeId: z.string(),
    online: z.boolean().describe('Between its NBIRTH and its NDEATH (or the broker’s loss).'),
    since: iso('When `online` last changed'),
    stale: z
      .boolean()
      .describe('Silent for longer than the driver’s staleAfterMs: its tags are Stale.'),
    lastBirth: iso('When its last NBIRTH arrived').optional(),
    lastMessage: iso('When its last message arrived').optional(),
    bdSeq: z.int().optional().describe('The bdSeq of its current session.'),
    sequenceErrors: z.int().describe('Messages whose seq was not the one expected.'),
    rebirthsRequested: z.int().describe('Rebirth requests (NCMD Node Control/Rebirth) sent.'),
    historicalSamples: z.int().describe('Metrics flagged is_historical received.'),
    catchUp: z.boolean().describe('Stored data is arriving: is_historical metrics within 10 s.'),
    tagCount: z.int().describe('Tags of the node and its devices.'),
    devices: z.array(relayDeviceSchema),
  })
  .meta({ id: 'RelayNode' });

const driverParams = z.object({
  driver: z.string().min(1).max(256).describe('Relay driver (component) name.'),
});

/** The tag relay routes. */
export function relayRoutes(deps: ApiDeps): RouteDefinition[] {
  const access = { kind: 'permission', permission: 'DriverView' } as const;
  const licensed = () => requireDataRelay(deps.license?.() ?? unlicensed, 'The tag relay');
  const licenseNote =
    'Needs the data relay feature (server or enterprise edition); without it the relay routes answer 403 `feature-unavailable`.';
  return [
    defineRoute({
      method: 'get',
      path: '/api/v2/Relay',
      operationId: 'listRelayDrivers',
      tag: 'Relay',
      summary: 'The relay drivers (Sparkplug host, MQTT subscriber) with a summary of their nodes',
      description: licenseNote,
      access,
      responses: {
        200: {
          description: 'The relay drivers, in profile order.',
          schema: z.object({ drivers: z.array(relayDriverSchema) }).meta({ id: 'RelayList' }),
        },
      },
      problems: [],
      handle: () => {
        licensed();
        return { drivers: deps.relay?.list() ?? [] };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v2/Relay/{driver}/Nodes',
      operationId: 'listRelayNodes',
      tag: 'Relay',
      summary: 'Every edge node and device a relay driver has seen',
      description: `Online or offline since when, last birth, bdSeq, sequence errors, rebirth requests, stored-data catch-up, tags per node. A generic MQTT subscriber has no nodes. ${licenseNote}`,
      access,
      params: driverParams,
      responses: {
        200: {
          description: 'The nodes, by group then edge node id.',
          schema: z
            .object({ driver: z.string(), nodes: z.array(relayNodeSchema) })
            .meta({ id: 'RelayNodes' }),
        },
      },
      problems: [404],
      handle: ({ params }) => {
        licensed();
        const nodes = deps.relay?.nodes(params.driver);
        if (nodes === undefined)
          throw new NotFoundError(`No relay driver named '${params.driver.slice(0, 300)}'.`);
        return { driver: params.driver, nodes };
      },
    }),
  ];
}
