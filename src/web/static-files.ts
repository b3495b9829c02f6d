/**
 * Serves the files of one folder, and nothing else: the one static file server of tagd.
 *
 * What a request may reach: a regular file whose real path (every symbolic link resolved) is
 * inside the folder's real path, named by segments that {@link parseRequestPath} accepted and
 * none starting with a dot (`.git`, `.env` stay private). Symbolic links inside the folder that
 * point inside it are followed; one that leads out is answered like a missing file. A directory
 * is answered by its `index.html` (never a listing). FIFOs, sockets and devices are refused
 * without being opened: opening a tty raises its modem lines, and a FIFO could hang a read.
 *
 * The check is made on the file actually opened, not only on its name: the descriptor's own path
 * (`/proc/self/fd/N`, Linux) must still lie inside the folder and fstat must show a regular file,
 * so a link swapped in between the check and the open is caught too.
 */
import { constants as fsConstants } from 'node:fs';
import { type FileHandle, open, readlink, realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { NotFoundError, RequestError } from '../errors.js';
import { contentTypeOf } from './content-types.js';
import { formatRequestPath } from './request-path.js';

/** Options of {@link StaticFolder}. */
export interface StaticFolderOptions {
  /** Absolute path of the folder served. Its real path is resolved at every request. */
  folder: string;
  /** Content-Security-Policy sent with every file of the folder. */
  csp: string;
  logger: Logger;
}

/** A regular file found inside the folder, opened. */
interface FoundFile {
  kind: 'file';
  handle: FileHandle;
  /** Bytes, from fstat of the opened file. */
  size: number;
  modified: Date;
  /** Name the media type is taken from: the requested one (a link's target may have none). */
  name: string;
}

type Lookup = FoundFile | { kind: 'directory' } | { kind: 'missing'; why: string };

/** Name of the file that answers for a directory. */
export const indexFileName = 'index.html';

const openFlags = fsConstants.O_RDONLY | fsConstants.O_NONBLOCK | fsConstants.O_NOCTTY;

/**
 * One folder of static files served under a mount path (e.g. `/andon`). GET and HEAD only;
 * every refusal is thrown as a TagdError for the problem middleware (404, 405).
 */
export class StaticFolder {
  constructor(private readonly options: StaticFolderOptions) {}

  /**
   * Answers the request for `segments` below the mount path `mount` (e.g. `/andon`):
   * the file with its media type, ETag, Last-Modified, `Cache-Control: no-cache` and the
   * folder's CSP; a directory named without its final `/` redirects (308) to the name with it.
   * @param segments decoded path segments below the mount, from {@link parseRequestPath}
   *   (`['']` for the mount's own folder).
   * @throws NotFoundError for anything not served; RequestError 405 for methods other than
   *   GET and HEAD.
   */
  async serve(context: Context, mount: string, segments: readonly string[]): Promise<void> {
    if (context.method !== 'GET' && context.method !== 'HEAD') {
      context.set('Allow', 'GET, HEAD');
      throw new RequestError(
        'method-not-allowed',
        405,
        `${context.method} is not allowed on ${context.path}: static files answer GET and HEAD.`,
      );
    }
    const notFound = new NotFoundError(`No file ${context.path}.`);
    if (segments.some((segment) => segment.startsWith('.'))) throw notFound;
    const found = await this.lookup(segments);
    if (found.kind === 'missing') {
      this.options.logger.debug({ path: context.path, why: found.why }, 'static file refused');
      throw notFound;
    }
    if (found.kind === 'directory') {
      const location = `${mount}${formatRequestPath([...segments, ''])}`;
      const query = context.querystring ? `?${context.querystring}` : '';
      // 308 keeps the method; the target is built from the checked segments, always same-origin.
      context.status = 308;
      context.set('Location', `${location}${query}`);
      return;
    }
    this.send(context, found);
  }

  private send(context: Context, file: FoundFile): void {
    context.status = 200;
    context.set('Content-Type', contentTypeOf(file.name));
    context.set('Content-Security-Policy', this.options.csp);
    // Revalidated at each use (cheap with the validators): an edited app is seen at once.
    context.set('Cache-Control', 'no-cache');
    context.set('ETag', `W/"${file.size.toString(16)}-${file.modified.getTime().toString(16)}"`);
    context.lastModified = file.modified;
    if (context.fresh) {
      context.status = 304;
      void file.handle.close().catch(() => undefined);
      return;
    }
    if (file.size === 0) {
      void file.handle.close().catch(() => undefined);
      context.body = Buffer.alloc(0);
      return;
    }
    // Streamed, so a file of any size costs a buffer's worth of memory. Exactly the size fstat
    // gave: the length sent is the length announced even if the file grows meanwhile. koa
    // destroys the stream (closing the descriptor) when the response ends, HEAD included.
    context.body = file.handle.createReadStream({ start: 0, end: file.size - 1 });
    context.length = file.size;
  }

  private async lookup(segments: readonly string[]): Promise<Lookup> {
    let root: string;
    try {
      // At every request: a folder that is a link (a deployment's `current`) may be re-pointed.
      root = await realpath(this.options.folder);
    } catch (error) {
      return { kind: 'missing', why: `app folder: ${(error as Error).message}` };
    }
    const wantsFolder = segments.length === 0 || segments[segments.length - 1] === '';
    const names = segments.filter((segment) => segment !== '');
    const target = await this.resolveInside(root, join(root, ...names));
    if (target.kind !== 'ok') return target;
    if (target.isDirectory) {
      if (!wantsFolder) return { kind: 'directory' };
      const index = await this.resolveInside(root, join(target.path, indexFileName));
      if (index.kind !== 'ok') return index;
      if (index.isDirectory) return { kind: 'missing', why: 'index.html is a directory' };
      return this.openInside(root, index.path, indexFileName);
    }
    if (wantsFolder) return { kind: 'missing', why: 'a file named as a folder' };
    return this.openInside(root, target.path, names[names.length - 1] ?? indexFileName);
  }

  // The real path of `candidate`, when it lies inside `root` and is a directory or regular file.
  private async resolveInside(
    root: string,
    candidate: string,
  ): Promise<
    { kind: 'ok'; path: string; isDirectory: boolean } | { kind: 'missing'; why: string }
  > {
    let real: string;
    try {
      real = await realpath(candidate);
    } catch (error) {
      return { kind: 'missing', why: (error as NodeJS.ErrnoException).code ?? 'realpath failed' };
    }
    if (!inside(root, real)) return { kind: 'missing', why: 'resolves outside the folder' };
    let stats: Awaited<ReturnType<typeof stat>>;
    try {
      stats = await stat(real);
    } catch (error) {
      return { kind: 'missing', why: (error as NodeJS.ErrnoException).code ?? 'stat failed' };
    }
    if (stats.isDirectory()) return { kind: 'ok', path: real, isDirectory: true };
    // Checked before any open: FIFOs, sockets and devices are never opened.
    if (!stats.isFile()) return { kind: 'missing', why: 'not a regular file' };
    return { kind: 'ok', path: real, isDirectory: false };
  }

  // Opens `real` without following a link swapped in as its last component, then checks the
  // opened descriptor itself: its path inside `root`, a regular file.
  private async openInside(root: string, real: string, name: string): Promise<Lookup> {
    let handle: FileHandle;
    try {
      handle = await open(real, openFlags | fsConstants.O_NOFOLLOW);
    } catch (error) {
      return { kind: 'missing', why: (error as NodeJS.ErrnoException).code ?? 'open failed' };
    }
    try {
      const opened = await readlink(`/proc/self/fd/${handle.fd}`);
      if (!inside(root, opened)) {
        await handle.close();
        return { kind: 'missing', why: 'the opened file lies outside the folder' };
      }
      const stats = await handle.stat();
      if (!stats.isFile()) {
        await handle.close();
        return { kind: 'missing', why: 'the opened file is not a regular file' };
      }
      return { kind: 'file', handle, size: stats.size, modified: stats.mtime, name };
    } catch (error) {
      await handle.close();
      // Fail closed: without /proc the opened file cannot be checked, so it is not served.
      return { kind: 'missing', why: `cannot check the opened file: ${(error as Error).message}` };
    }
  }
}

/** True when `path` is `root` itself or below it (both real, absolute paths). */
function inside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}
