/**
 * Bundles the browser console (src/console/web/) with esbuild: minified, content-hashed file
 * names (so the server can mark them immutable), a static index.html that references them with
 * no inline script or style (strict CSP), and a manifest for the server. `npm run build` runs
 * it into dist/console/; tests build into a temp folder.
 *
 * Run directly: `node dist/src/console/build-console.js [outDir]`.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../package-root.js';
import {
  assetPathPrefix,
  type ConsoleManifest,
  defaultConsoleDir,
  manifestFileName,
} from './console-manifest.js';

/** Options of {@link buildConsole}. */
export interface BuildConsoleOptions {
  /** Output folder; emptied first. Default: `<package root>/dist/console`. */
  outDir?: string;
  /** Minify. Default true. */
  minify?: boolean;
}

/** Result of a build: the manifest and the size of every asset, bytes. */
export interface BuildConsoleResult {
  outDir: string;
  manifest: ConsoleManifest;
  /** Asset file name → bytes. */
  sizes: Record<string, number>;
}

/** Builds the console bundle. @throws when esbuild reports an error. */
export async function buildConsole(options: BuildConsoleOptions = {}): Promise<BuildConsoleResult> {
  // Imported here: esbuild is a build tool (devDependency); the daemon never loads this file.
  const esbuild = await import('esbuild');
  const outDir = resolve(options.outDir ?? join(packageRoot, defaultConsoleDir));
  const webDir = join(packageRoot, 'src/console/web');
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  const result = await esbuild.build({
    entryPoints: [join(webDir, 'main.tsx'), join(webDir, 'styles.css')],
    outdir: outDir,
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    target: ['chrome109', 'firefox115', 'safari15'],
    minify: options.minify ?? true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    // Source maps stay out: the panel PC has no use for them and the budget counts bytes.
    sourcemap: false,
    legalComments: 'none',
    metafile: true,
    logLevel: 'silent',
    tsconfig: join(webDir, 'tsconfig.json'),
  });
  const assets = Object.keys(result.metafile.outputs).map((file) => basename(file));
  const script = assets.find((name) => /^main-.+\.js$/.test(name));
  const styles = assets.filter((name) => name.endsWith('.css'));
  if (!script) throw new Error('console build: no main script was produced');
  const index = 'index.html';
  await writeFile(join(outDir, index), indexHtml(script, styles));
  const manifest: ConsoleManifest = { index, assets: assets.sort() };
  await writeFile(join(outDir, manifestFileName), `${JSON.stringify(manifest, null, 2)}\n`);
  const sizes: Record<string, number> = {};
  for (const [file, output] of Object.entries(result.metafile.outputs)) {
    sizes[basename(file)] = output.bytes;
  }
  return { outDir, manifest, sizes };
}

/**
 * The one HTML page. No inline script or style: the CSP forbids both. The script is a module
 * (deferred), so it runs once the body below exists. The empty data: icon spares the browser a
 * request for /favicon.ico (a 404). `/theme.css` comes after the console's stylesheet, so its
 * colours (the plant's themes, src/themes/) win over the light ones the stylesheet holds.
 */
function indexHtml(script: string, styles: string[]): string {
  const links = styles
    .map((name) => `  <link rel="stylesheet" href="${assetPathPrefix}${name}">`)
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="color-scheme" content="light dark">
  <title>tagd console</title>
  <link rel="icon" href="data:,">
${links}
  <link rel="stylesheet" href="/theme.css">
  <script type="module" src="${assetPathPrefix}${script}"></script>
</head>
<body>
  <noscript>The tagd console needs JavaScript.</noscript>
  <div id="app"></div>
</body>
</html>
`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = process.argv[2];
  const built = await buildConsole(outDir ? { outDir } : {});
  const total = Object.values(built.sizes).reduce((sum, bytes) => sum + bytes, 0);
  process.stdout.write(
    `console built into ${built.outDir}: ${built.manifest.assets.join(', ')} (${total} bytes)\n`,
  );
}
