import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { InternalError, TagdError, ValidationError } from '../errors.js';

/** RFC 9457 problem document as tagd answers it. */
export interface ProblemDocument {
  /** URI naming the problem type: `urn:tagd:problem:<code>`. */
  type: string;
  title: string;
  status: number;
  detail: string;
  /** The request path the problem is about. */
  instance: string;
  /** Stable error code (see the table in docs/errors.md). */
  code: string;
  /** For validation failures: every field that was wrong. */
  errors?: { path: string; message: string }[];
}

/** Media type of problem documents. */
export const problemMediaType = 'application/problem+json';

/**
 * Builds the problem document for an error. Errors tagd raised on purpose are shown as they
 * are; anything else becomes 500 `internal`, its details kept for the log.
 */
export function problemFor(error: unknown, instance: string): ProblemDocument {
  const known = error instanceof TagdError ? error : new InternalError();
  const { type, title, status, detail, code } = problemOf(known);
  return {
    type,
    title,
    status,
    detail,
    instance,
    code,
    ...(known instanceof ValidationError ? { errors: [...known.errors] } : {}),
  };
}

/**
 * The problem document of an error raised before any route saw the request (a malformed
 * request line, headers over the limit): no `instance`, since no path was read.
 */
export function problemOf(error: TagdError): Omit<ProblemDocument, 'instance' | 'errors'> {
  return {
    type: `urn:tagd:problem:${error.code}`,
    title: titleOf(error.status),
    status: error.status,
    detail: error.message,
    code: error.code,
  };
}

/** Sends a problem document as the response. */
export function sendProblem(context: Context, problem: ProblemDocument): void {
  context.status = problem.status;
  context.type = problemMediaType;
  context.body = problem;
}

/** How a request's outcome becomes a problem document; see {@link problemAnswers}. */
export interface ProblemAnswers {
  /** After the app answered: an error status without a problem document gets one. */
  settled(context: Context): void;
  /** After the app threw: the error becomes the answer. */
  failed(context: Context, error: unknown): void;
}

/**
 * Answers every thrown error, and every error status koa or the router left bare, with a
 * problem document. Unexpected errors are logged with their stack; the client never sees one.
 */
export function problemAnswers(logger: Logger): ProblemAnswers {
  const failed = (context: Context, error: unknown): void => {
    const problem = problemFor(fromKoaError(error), context.path);
    if (problem.status >= 500) logger.error({ err: error, path: context.path }, 'request failed');
    sendProblem(context, problem);
  };
  return {
    failed,
    settled(context) {
      try {
        answerBareStatus(context);
      } catch (error) {
        failed(context, error);
      }
    },
  };
}

/** {@link problemAnswers} as a koa middleware, for an app of its own (tests). */
export function problemMiddleware(logger: Logger): Middleware {
  const answers = problemAnswers(logger);
  return (context, next) =>
    next().then(
      () => answers.settled(context),
      (error: unknown) => answers.failed(context, error),
    );
}

// Routers and koa answer 404/405 with a bare status or plain text; clients always get a problem.
function answerBareStatus(context: Context): void {
  if (context.status < 400 || context.type === problemMediaType) return;
  const status = context.status;
  const detail =
    status === 404
      ? `No route ${context.method} ${context.path}.`
      : status === 501
        ? `The method ${context.method} is not implemented.`
        : `${context.method} is not allowed on ${context.path}.`;
  sendProblem(
    context,
    problemFor(new TagdError(codeOfStatus(status), status, detail), context.path),
  );
}

/**
 * Koa and its middleware throw http-errors (status, expose): a 4xx one becomes a TagdError with
 * its status and safe message; anything else is returned as it is.
 */
export function fromKoaError(error: unknown): unknown {
  if (error instanceof TagdError) return error;
  const candidate = error as { status?: unknown; expose?: unknown; message?: unknown };
  if (typeof candidate?.status === 'number' && candidate.status >= 400 && candidate.status < 500) {
    const message = candidate.expose ? String(candidate.message) : titleOf(candidate.status);
    return new TagdError(codeOfStatus(candidate.status), candidate.status, message);
  }
  return error;
}

function codeOfStatus(status: number): string {
  if (status === 413) return 'payload-too-large';
  if (status === 415) return 'unsupported-media-type';
  if (status === 404) return 'not-found';
  if (status === 405) return 'method-not-allowed';
  if (status === 501) return 'not-implemented';
  return 'bad-request';
}

const titles: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  417: 'Expectation Failed',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** The reason phrase of an HTTP status, e.g. `Not Found`; `Error` for one tagd never answers. */
export function titleOf(status: number): string {
  return titles[status] ?? 'Error';
}
