/**
 * A real node-opcua server on loopback for the OPC UA driver tests: a few variables of every
 * kind in its own namespace (`ns=1;s=<name>`), anonymous and user name identities, security
 * None and SignAndEncrypt (Basic256Sha256, Aes128_Sha256_RsaOaep, Aes256_Sha256_RsaPss). Its
 * certificate store is a folder the test keeps, so the certificate is generated once per file
 * (a couple of seconds) and a restarted server keeps it.
 *
 * By default, like node-opcua servers in general, its None endpoint offers user names only
 * with the password encrypted for the server (Basic256Sha256 or Aes128_Sha256_RsaOaep token
 * policies); `clearPassword` makes it ask for the password in clear, as some old servers do.
 */
// Before node-opcua loads: its load-time warnings stay out of the test output.
import '../../drivers/opcua/node-opcua-quiet.js';
import { join } from 'node:path';
import {
  DataType,
  MessageSecurityMode,
  OPCUACertificateManager,
  OPCUAServer,
  SecurityPolicy,
  StatusCode,
  StatusCodes,
  type UAVariable,
  UserTokenPolicy,
  UserTokenType,
  Variant,
  VariantArrayType,
} from 'node-opcua';

/** A variable of the test server. */
export interface TestVariable {
  dataType: DataType;
  value: unknown;
  array?: boolean;
  /** Readable only: a write answers BadNotWritable. Default: readable and writable. */
  readOnly?: boolean;
}

/** The variables every test server has, by name (NodeId `ns=1;s=<name>`). */
export const testVariables: Record<string, TestVariable> = {
  Temperature: { dataType: DataType.Double, value: 21.5 },
  Counter: { dataType: DataType.Int32, value: 0 },
  Running: { dataType: DataType.Boolean, value: true },
  Mode: { dataType: DataType.String, value: 'Auto' },
  Started: { dataType: DataType.DateTime, value: new Date('2026-01-02T03:04:05.678Z') },
  Big: { dataType: DataType.Int64, value: [1, 2] },
  /** 2^53 + 1: no double holds it. */
  Huge: { dataType: DataType.UInt64, value: [0x0020_0000, 1] },
  Negative: { dataType: DataType.Int64, value: [0xffffffff, 0xfffffffe] },
  Label: { dataType: DataType.LocalizedText, value: { text: 'Filling', locale: 'en' } },
  Vector: { dataType: DataType.Double, value: [1, 2, 3], array: true },
  Level: { dataType: DataType.Double, value: 1 },
  Pressure: { dataType: DataType.Float, value: 2.5 },
};

/** The NodeId of a test variable. */
export const testNodeId = (name: string) => `ns=1;s=${name}`;

/** Options of {@link OpcuaTestServer.start}. */
export interface OpcuaTestServerOptions {
  /** The server's certificate store; keep it for a restart with the same certificate. */
  pkiDir: string;
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Accepted user names and passwords. Default: `operator` / `s3cret-pw`. */
  users?: Record<string, string>;
  /** Extra Double variables `Bulk0`, `Bulk1`, … (for many monitored items). Default 0. */
  bulk?: number;
  /** Accept any client certificate (default); false: only those in its trusted folder. */
  trustClients?: boolean;
  /** The server's MaxMonitoredItemsPerCall operation limit. Default: none. */
  maxMonitoredItemsPerCall?: number;
  /** More variables, by string identifier (NodeId `ns=1;s=<name>`), e.g. an example profile's. */
  variables?: Record<string, TestVariable>;
  /**
   * The None endpoint offers user names with one token policy only, of security policy None:
   * the password in clear. Default false.
   */
  clearPassword?: boolean;
}

/** The default user of the test server. */
export const testUser = { username: 'operator', password: 's3cret-pw' };

/** What the fault controls use of a server-side subscription (node-opcua internals). */
interface ServerSubscription {
  setPublishingMode(publishingEnabled: boolean): unknown;
  terminate(): void;
  lifeTimeCount: number;
  _life_time_counter: number;
}

/** What the fault controls use of a session's publish engine (node-opcua internals). */
interface ServerPublishEngine {
  subscriptions: ServerSubscription[];
  _publish_request_queue: unknown[];
}

/** A running test server. */
export class OpcuaTestServer {
  /** User name and password checks made (each one a password received). */
  userChecks = 0;
  /** The server's own Publish handler, while {@link answerPublish} holds it back. */
  private publishHandler: unknown;

  private constructor(
    private readonly server: OPCUAServer,
    private readonly variables: Map<string, UAVariable>,
    private readonly specs: Map<string, TestVariable>,
    readonly port: number,
    readonly pkiDir: string,
  ) {}

  /** Starts a server; resolves once it listens. */
  static async start(options: OpcuaTestServerOptions): Promise<OpcuaTestServer> {
    const certificates = new OPCUACertificateManager({
      rootFolder: options.pkiDir,
      automaticallyAcceptUnknownCertificate: options.trustClients ?? true,
      disableFileWatchers: true,
    });
    await certificates.initialize();
    const users = options.users ?? { [testUser.username]: testUser.password };
    let self: OpcuaTestServer | undefined;
    const server = new OPCUAServer({
      port: options.port ?? 0,
      hostname: '127.0.0.1',
      alternateHostname: ['127.0.0.1'],
      serverCertificateManager: certificates,
      securityModes: [MessageSecurityMode.None, MessageSecurityMode.SignAndEncrypt],
      securityPolicies: [
        SecurityPolicy.None,
        SecurityPolicy.Basic256Sha256,
        SecurityPolicy.Aes128_Sha256_RsaOaep,
        SecurityPolicy.Aes256_Sha256_RsaPss,
      ],
      allowAnonymous: true,
      userManager: {
        isValidUser: (name: string, password: string) => {
          if (self) self.userChecks++;
          return users[name] === password;
        },
      },
      buildInfo: { productName: 'tagd test server' },
      ...(options.maxMonitoredItemsPerCall !== undefined
        ? {
            serverCapabilities: {
              operationLimits: { maxMonitoredItemsPerCall: options.maxMonitoredItemsPerCall },
            },
          }
        : {}),
    });
    await server.initialize();
    if (options.clearPassword) {
      for (const endpoint of server.endpoints) {
        for (const description of endpoint.endpointDescriptions()) {
          if (description.securityMode !== MessageSecurityMode.None) continue;
          description.userIdentityTokens = [
            ...(description.userIdentityTokens ?? []).filter(
              (policy) => policy.tokenType !== UserTokenType.UserName,
            ),
            new UserTokenPolicy({
              policyId: 'username_clear',
              tokenType: UserTokenType.UserName,
              securityPolicyUri: SecurityPolicy.None,
            }),
          ];
        }
      }
    }
    const addressSpace = server.engine.addressSpace;
    if (!addressSpace) throw new Error('the test server has no address space');
    const namespace = addressSpace.getOwnNamespace();
    const folder = namespace.addFolder(addressSpace.rootFolder.objects, { browseName: 'Plant' });
    const variables = new Map<string, UAVariable>();
    const all: [string, TestVariable][] = [
      ...Object.entries(testVariables),
      ...Object.entries(options.variables ?? {}),
    ];
    for (let i = 0; i < (options.bulk ?? 0); i++) {
      all.push([`Bulk${i}`, { dataType: DataType.Double, value: i }]);
    }
    for (const [name, spec] of all) {
      const variable = namespace.addVariable({
        componentOf: folder,
        browseName: name,
        nodeId: `s=${name}`,
        dataType: spec.dataType,
        ...(spec.array ? { valueRank: 1 } : {}),
        ...(spec.readOnly ? { accessLevel: 'CurrentRead', userAccessLevel: 'CurrentRead' } : {}),
      });
      variable.setValueFromSource(variant(spec), StatusCodes.Good);
      variables.set(name, variable);
    }
    await server.start();
    const port = server.endpoints[0]?.port ?? 0;
    self = new OpcuaTestServer(server, variables, new Map(all), port, options.pkiDir);
    return self;
  }

  /** `opc.tcp://127.0.0.1:<port>`. */
  get endpointUrl(): string {
    return `opc.tcp://127.0.0.1:${this.port}`;
  }

  /** The server's own certificate file (PEM). */
  get certificateFile(): string {
    return join(this.pkiDir, 'own', 'certs', 'certificate.pem');
  }

  /**
   * Sets a variable's value and status, now. The status is a name of StatusCodes, e.g.
   * `BadDeviceFailure` or `UncertainLastUsableValue`.
   */
  set(name: string, value: unknown, status = 'Good'): void {
    const variable = this.variables.get(name);
    if (!variable) throw new Error(`no test variable ${name}`);
    const spec = this.specs.get(name) ?? { dataType: DataType.Double, value };
    const code = (StatusCodes as unknown as Record<string, StatusCode>)[status];
    if (!(code instanceof StatusCode)) throw new Error(`no status code ${status}`);
    variable.setValueFromSource(variant({ ...spec, value }), code, new Date());
  }

  /** A variable's current value, as the server holds it (a Variant's value). */
  get(name: string): unknown {
    const variable = this.variables.get(name);
    if (!variable) throw new Error(`no test variable ${name}`);
    return variable.readValue().value.value;
  }

  /**
   * Fault: turns publishing of every subscription off (or back on), as SetPublishingMode does.
   * A subscription whose publishing is off still sends keep-alives, but no notification.
   */
  setPublishing(enabled: boolean): void {
    for (const subscription of this.subscriptions()) subscription.setPublishingMode(enabled);
  }

  /**
   * Fault: with `false`, Publish requests are never answered: those the server holds are
   * dropped, new ones ignored (every other service still answers). `true` answers them again.
   */
  answerPublish(answer: boolean): void {
    const server = this.server as unknown as Record<string, unknown>;
    if (!answer) {
      this.publishHandler ??= server._on_PublishRequest;
      server._on_PublishRequest = () => {};
      for (const engine of this.publishEngines()) engine._publish_request_queue = [];
    } else if (this.publishHandler !== undefined) {
      server._on_PublishRequest = this.publishHandler;
      this.publishHandler = undefined;
    }
  }

  /**
   * Fault: every subscription's lifetime runs out at its next publishing tick: the server
   * closes it and sends a StatusChangeNotification BadTimeout, as for a client that stopped
   * sending Publish requests.
   */
  expireSubscriptions(): void {
    for (const subscription of this.subscriptions()) {
      subscription._life_time_counter = subscription.lifeTimeCount;
    }
  }

  /** Fault: closes every subscription at once, without telling the client. */
  dropSubscriptions(): void {
    for (const subscription of this.subscriptions()) subscription.terminate();
  }

  /** Subscriptions the server holds, of every session. */
  subscriptionCount(): number {
    return this.subscriptions().length;
  }

  private publishEngines(): ServerPublishEngine[] {
    return this.server.engine
      .getSessions()
      .map((session) => session.publishEngine as unknown as ServerPublishEngine);
  }

  private subscriptions(): ServerSubscription[] {
    return this.publishEngines().flatMap((engine) => engine.subscriptions);
  }

  /** Shuts the server down at once (clients see the connection drop). */
  async stop(): Promise<void> {
    await this.server.shutdown(0);
  }
}

function variant(spec: TestVariable): Variant {
  return new Variant({
    dataType: spec.dataType,
    arrayType: spec.array ? VariantArrayType.Array : VariantArrayType.Scalar,
    value: spec.value,
  });
}
