/**
 * The contract between the console build (build-console.ts) and the server that serves it
 * (console-bundle.ts): the file the build writes beside the assets.
 */

/** File name of the manifest in the bundle folder. */
export const manifestFileName = 'manifest.json';

/** What a console build produced. */
export interface ConsoleManifest {
  /** The page every console URL loads; references the hashed assets. */
  index: string;
  /** Hashed asset file names (`main-3XK2J7QH.js`), served immutable under `/console/`. */
  assets: string[];
}

/** URL path under which the hashed assets are served. */
export const assetPathPrefix = '/console/';

/** Where `npm run build` puts the console, relative to the package root. */
export const defaultConsoleDir = 'dist/console';
