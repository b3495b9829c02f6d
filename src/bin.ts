#!/usr/bin/env node
/**
 * The `tagd` executable (package.json `bin`, /usr/bin/tagd in the .deb). It checks the Node.js
 * version first and only then loads the command line: static imports are all linked before any
 * module runs, so on an old Node a missing API in any of them would crash with a stack trace
 * before a check inside src/cli.ts could speak. This file and node-version.ts need nothing
 * newer than Node 14.8 (top-level await).
 */
import { exitCodes } from './exit-codes.js';
import { nodeVersionProblem } from './node-version.js';

const problem = nodeVersionProblem(process.versions.node);
if (problem === undefined) {
  await import('./cli.js');
} else {
  process.stderr.write(`${problem}\n`);
  // 78 (EX_CONFIG): the installation, not the moment, is wrong; the systemd unit does not
  // restart on it (RestartPreventExitStatus=78).
  process.exitCode = exitCodes.config;
}
