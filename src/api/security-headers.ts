import type Koa from 'koa';
import { consolePagePath } from '../console/console-routes.js';

const strictPolicy = "default-src 'none'; frame-ancestors 'none'";
// The Swagger UI page is one of the two HTML documents served: it may load its same-origin script
// and stylesheet, show the stylesheet's data: images and call this API; nothing external, no
// inline script. (React's style props go through the CSSOM, which style-src does not block.)
const swaggerUiPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
// The console page: its own hashed script and stylesheet, uPlot's canvas, the API (fetch and
// the Tags/Stream event source); no inline script or style, no other origin.
const consolePolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; manifest-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
const commonHeaders: [string, string][] = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
  ['Cross-Origin-Resource-Policy', 'same-origin'],
  ['Cache-Control', 'no-store'],
];

/**
 * Sets the security headers of every answer: nosniff, no framing, no referrer, same-origin
 * resources, no caching, HSTS over TLS, and the CSP (strict, or the policy of the Swagger UI
 * or console page). Set on the raw response: these constant values need none of koa's
 * per-call handling, and this runs on every request.
 */
export function setSecurityHeaders(context: Koa.Context): void {
  const response = context.res;
  for (const [name, value] of commonHeaders) response.setHeader(name, value);
  // context.path parses the URL: only for a URL that can be one of the two HTML pages.
  const url = context.req.url ?? '';
  const mayBePage = url[0] !== '/' || url.startsWith('/swagger') || url === '/' || url[1] === '?';
  const path = mayBePage ? context.path : '';
  const policy =
    path === '/swagger' || path === '/swagger/'
      ? swaggerUiPolicy
      : path === consolePagePath
        ? consolePolicy
        : strictPolicy;
  response.setHeader('Content-Security-Policy', policy);
  // What context.secure says with proxy: false (createApp): the socket is TLS.
  if ((context.req.socket as { encrypted?: boolean }).encrypted === true) {
    response.setHeader('Strict-Transport-Security', 'max-age=31536000');
  }
}
