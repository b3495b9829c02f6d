/**
 * Media types of static files by extension. A closed list, so that a file is never served
 * with a type a browser would run as something else (every answer also carries
 * `X-Content-Type-Options: nosniff`).
 */
import { extname } from 'node:path';

const utf8 = '; charset=utf-8';

const types: Record<string, string> = {
  '.html': `text/html${utf8}`,
  '.htm': `text/html${utf8}`,
  '.js': `text/javascript${utf8}`,
  '.mjs': `text/javascript${utf8}`,
  '.css': `text/css${utf8}`,
  '.json': `application/json${utf8}`,
  '.map': `application/json${utf8}`,
  '.webmanifest': `application/manifest+json${utf8}`,
  '.txt': `text/plain${utf8}`,
  '.csv': `text/csv${utf8}`,
  '.xml': `application/xml${utf8}`,
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.wasm': 'application/wasm',
  '.pdf': 'application/pdf',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
};

/** Media type sent for other extensions: a download, never rendered or run. */
export const fallbackContentType = 'application/octet-stream';

/** The media type of a file name, e.g. `text/css; charset=utf-8` for `site.css`. */
export function contentTypeOf(fileName: string): string {
  return types[extname(fileName).toLowerCase()] ?? fallbackContentType;
}
