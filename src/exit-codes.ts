/**
 * Exit codes of the `tagd` command, in a module of their own so the CLI can name them without
 * loading the daemon (src/main.ts imports every component).
 */

/** Exit codes of `tagd start` and the other commands. */
export const exitCodes = {
  ok: 0,
  /** A runtime failure, a port in use, or a stop that overran its deadline. */
  failure: 1,
  /** A wrong command line (the CLI's commands). */
  usage: 2,
  /** `tagd status`: the daemon answered, and a driver, publisher or the history is in error. */
  statusProblem: 3,
  /**
   * A configuration error restarting will not fix (sysexits EX_CONFIG): see
   * `isConfigError` in src/main.ts. Also a bad `TAGD_LOG_LEVEL`.
   */
  config: 78,
} as const;
