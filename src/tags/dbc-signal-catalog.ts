/**
 * The DBC definitions the API knows: which CAN components exist,
 * the messages of each component's DBC and the signals of each message. A CAN driver registers
 * its DBC when it starts and unregisters when it stops; the values themselves live in the tag
 * store under `<component>/<message>/<signal>`. Pure: no I/O, no parsing of DBC text. It lives
 * with the tags, not in `src/dbc/`, because its names are tag path segments: the DBC decoder
 * stays free of the tag domain.
 */
import type { DbcMessageDefinition, DbcSignalDefinition } from '../dbc/catalog-entries.js';
import { type FieldError, NotFoundError, ValidationError } from '../errors.js';
import { tagPathProblem } from './tag-path.js';

/** What a lookup found: the signal, or the first level that is missing. */
export type DbcLookup =
  | { found: true; signal: DbcSignalDefinition; fullTagId: string }
  | { found: false; missing: 'component' | 'message' | 'signal' };

/** Longest name quoted back in a not-found message: names come from the request URL. */
const maxQuotedLength = 100;

/**
 * The registered DBCs, by component (CAN driver name), message and signal. Lookups are three
 * map reads, cheap enough for every API request.
 */
export class DbcSignalCatalog {
  private readonly components = new Map<string, Map<string, Map<string, DbcSignalDefinition>>>();

  /**
   * Registers the DBC of a component, replacing what the component registered before (a driver
   * restarted with an edited DBC). The names must be valid tag path segments, since each signal
   * is the tag `<component>/<message>/<signal>`; message names are unique in the component and
   * signal names unique in their message.
   * @throws ValidationError listing every invalid or duplicate name; nothing is registered then.
   */
  register(component: string, messages: readonly DbcMessageDefinition[]): void {
    const errors: FieldError[] = [];
    const componentProblem = segmentProblem(component);
    if (componentProblem) errors.push({ path: 'component', message: componentProblem });
    const byMessage = new Map<string, Map<string, DbcSignalDefinition>>();
    messages.forEach((message, m) => {
      const messageProblem = segmentProblem(message.name);
      if (messageProblem) errors.push({ path: `messages[${m}].name`, message: messageProblem });
      else if (byMessage.has(message.name)) {
        errors.push({
          path: `messages[${m}].name`,
          message: `Message '${message.name}' is defined twice.`,
        });
      }
      const bySignal = new Map<string, DbcSignalDefinition>();
      message.signals.forEach((signal, s) => {
        const path = `messages[${m}].signals[${s}].name`;
        const signalProblem = segmentProblem(signal.name);
        if (signalProblem) errors.push({ path, message: signalProblem });
        else if (bySignal.has(signal.name)) {
          errors.push({
            path,
            message: `Signal '${signal.name}' is defined twice in message '${message.name}'.`,
          });
        } else bySignal.set(signal.name, { ...signal });
      });
      if (!byMessage.has(message.name)) byMessage.set(message.name, bySignal);
    });
    if (errors.length > 0) {
      throw new ValidationError(`The DBC of component '${quote(component)}' is invalid.`, errors);
    }
    this.components.set(component, byMessage);
  }

  /** Removes a component's DBC. @returns whether the component was registered. */
  unregister(component: string): boolean {
    return this.components.delete(component);
  }

  /** True when a component has registered a DBC. */
  has(component: string): boolean {
    return this.components.has(component);
  }

  /** Names of the registered components, in registration order. */
  componentNames(): string[] {
    return [...this.components.keys()];
  }

  /**
   * The signal names of a message in DBC order.
   * @throws NotFoundError naming the missing level (component or message).
   */
  signalNames(component: string, message: string): string[] {
    const messages = this.components.get(component);
    if (messages === undefined) {
      throw new NotFoundError(`CAN component '${quote(component)}' does not exist.`);
    }
    const signals = messages.get(message);
    if (signals === undefined) {
      throw new NotFoundError(
        `Message '${quote(message)}' is not defined in the DBC of component '${quote(component)}'.`,
      );
    }
    return [...signals.keys()];
  }

  /** Finds a signal, or says which level (component, message, signal) does not exist. */
  lookup(component: string, message: string, signal: string): DbcLookup {
    const messages = this.components.get(component);
    if (messages === undefined) return { found: false, missing: 'component' };
    const signals = messages.get(message);
    if (signals === undefined) return { found: false, missing: 'message' };
    const definition = signals.get(signal);
    if (definition === undefined) return { found: false, missing: 'signal' };
    return { found: true, signal: definition, fullTagId: `${component}/${message}/${signal}` };
  }

  /**
   * Finds a signal.
   * @throws NotFoundError whose message names the missing level, e.g.
   *   "Message 'Y' is not defined in the DBC of component 'X'."
   */
  require(
    component: string,
    message: string,
    signal: string,
  ): { signal: DbcSignalDefinition; fullTagId: string } {
    const result = this.lookup(component, message, signal);
    if (result.found) return result;
    const [c, m, s] = [quote(component), quote(message), quote(signal)];
    switch (result.missing) {
      case 'component':
        throw new NotFoundError(`CAN component '${c}' does not exist.`);
      case 'message':
        throw new NotFoundError(`Message '${m}' is not defined in the DBC of component '${c}'.`);
      case 'signal':
        throw new NotFoundError(
          `Signal '${s}' is not defined in message '${m}' of component '${c}'.`,
        );
    }
  }
}

function segmentProblem(name: string): string | undefined {
  const problem = tagPathProblem(name);
  if (problem !== undefined) return `Invalid name '${quote(name)}': ${problem}.`;
  if (name.includes('/')) return `Invalid name '${quote(name)}': it must be one path segment.`;
  return undefined;
}

function quote(name: string): string {
  return name.length > maxQuotedLength ? `${name.slice(0, maxQuotedLength)}…` : name;
}
