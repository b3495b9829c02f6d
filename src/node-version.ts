/**
 * The Node.js versions tagd runs on, checked by the `tagd` executable (src/bin.ts) before it
 * loads anything else. No imports: this module must load on any Node version, so that an old
 * one prints a sentence instead of failing on an API or syntax it lacks.
 */

/**
 * Supported Node.js versions, as in package.json `engines` (a test keeps the two equal):
 * 20.19 or later in the 20 line, or 22+ (21 is an odd, short-lived line).
 */
export const supportedNode = '>=20.19 <21 || >=22';

/**
 * Why `version` (e.g. `process.versions.node`, `20.19.4`) cannot run tagd, as one line for
 * stderr, or undefined when it can.
 */
export function nodeVersionProblem(version: string): string | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (match === null) return `tagd: cannot read the Node.js version '${version}'`;
  const major = Number(match[1]);
  const minor = Number(match[2]);
  const supported = (major === 20 && minor >= 19) || major >= 22;
  if (supported) return undefined;
  return `tagd: Node.js ${version} is not supported; tagd needs Node.js 20.19 or later (20.x) or 22+ (see docs/installing.md)`;
}
