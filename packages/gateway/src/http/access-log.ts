/**
 * One access-log line per request, written when the response is done, and the
 * per-request metrics. Paid routes give their request an AccessLog (accessLogFor) and
 * hand it to settlement, which fills in the payment (payments/payment-log.ts); error
 * bodies give the code and reason. The line holds chosen fields only: never a header
 * value, a proof, a token, a query string or a body.
 *
 * Levels: info for what an operator reads (every 4xx and 5xx, every 402, every paid
 * request), debug for the rest. A 402 costs one object (the route's AccessLog, reused
 * as the line's fields) and one line of flat fields, written as pino writes it
 * (logger.ts flatLineWriter). That line skips pino's redaction: its wildcard paths cost
 * ~15-25 µs a line, several times the rest of the line, and a line of chosen flat strings
 * and numbers has nothing for them to find. Keep it so: never add a header, a body or an
 * object to AccessLog.
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { type FlatFields, type FlatLineWriter, flatLineWriter, type Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { PaymentLog } from '../payments/payment-log.ts';

/** The fields of a request's access-log line (docs/operations.md lists them). */
export interface AccessLog extends PaymentLog {
  /** The request id (the `x-request-id` answered; the `reqId` of the request's other lines). */
  reqId: string | undefined;
  method: string | undefined;
  /** The path without its query string (provider origin auth may travel there). */
  path: string | undefined;
  /** Route family: marketplace, chat, embeddings, projects, ..., other, unmatched. */
  route: string | undefined;
  status: number | undefined;
  /** The error code of an error answer (`payment_required` for a 402). */
  code: string | undefined;
  /** Marketplace: the project's slug and the endpoint's id. */
  project: string | undefined;
  endpoint: string | undefined;
  /** Milliseconds from the request's arrival to the response's end. */
  ms: number | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by routes that have more to say than the status (paid routes); read by the access log. */
    accessLog: AccessLog | null;
  }
}

/** Every field present from the start: one object shape for every line. */
export function newAccessLog(): AccessLog {
  return {
    reqId: undefined,
    method: undefined,
    path: undefined,
    route: undefined,
    status: undefined,
    code: undefined,
    reason: undefined,
    project: undefined,
    endpoint: undefined,
    format: undefined,
    chain: undefined,
    tx: undefined,
    payer: undefined,
    amount: undefined,
    redemption: undefined,
    outcome: undefined,
    ms: undefined,
  };
}

/** Every field a line may carry, in order (docs/operations.md documents each). */
export const ACCESS_LOG_FIELDS: readonly string[] = Object.freeze(Object.keys(newAccessLog()));

/** The request's access-log fields, made on first use. */
export function accessLogFor(request: FastifyRequest): AccessLog {
  let log = request.accessLog;
  if (log === null) {
    log = newAccessLog();
    request.accessLog = log;
  }
  return log;
}

const SNAKE = /^[a-z][a-z0-9_]{0,95}$/;

/**
 * Notes an error body's code and reason in `log`: `{ error: code, reason?, … }`, or the
 * OpenAI-style `{ error: { code, reason?, … } }`. Only snake_case values are taken.
 */
export function noteErrorBody(log: AccessLog, payload: object): void {
  let body = payload as { error?: unknown; code?: unknown; reason?: unknown };
  let code = body.error;
  if (code !== null && typeof code === 'object') {
    body = code as typeof body;
    code = body.code;
  }
  if (typeof code === 'string' && SNAKE.test(code)) {
    log.code = code;
    // Settlement's own reason (more precise) wins; ours are snake_case, nothing else is logged.
    const { reason } = body;
    if (log.reason === undefined && typeof reason === 'string' && SNAKE.test(reason)) log.reason = reason;
  }
}

/** Route family for labels and lines: from the matched route pattern, so bounded. */
const families = new Map<string, string>();
export function routeFamily(pattern: string | undefined): string {
  if (pattern === undefined) return 'unmatched';
  let family = families.get(pattern);
  if (family === undefined) {
    family = pattern.startsWith('/p/')
      ? 'marketplace'
      : pattern.startsWith('/v1/')
        ? pattern.split('/')[2] || 'v1'
        : 'other';
    families.set(pattern, family);
  }
  return family;
}

type Access = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

/**
 * When a request that waited before Fastify got it arrived (performance.now()): the fast path
 * notes it for one that waits for its catalogue snapshot, so the answer's time, whichever
 * path gives it, counts the wait.
 */
const arrivals = new WeakMap<object, number>();
export function noteArrival(req: object, at: number): void {
  arrivals.set(req, at);
}
/** The noted arrival of `req` (noteArrival), or undefined. */
export function arrivalOf(req: object): number | undefined {
  return arrivals.get(req);
}

/**
 * Records one finished request: the metrics and the access line. The onResponse hook
 * calls it for every request Fastify answers, fast-unpaid.ts for the requests it answers itself.
 * `routePattern` is the matched route's pattern (undefined: unmatched); `known` the
 * route's AccessLog, if it made one.
 */
export type AccessRecorder = (
  reqId: string,
  method: string,
  url: string,
  routePattern: string | undefined,
  status: number,
  elapsedMs: number,
  known: AccessLog | null,
) => void;

export function installAccessLog(app: FastifyInstance, metrics: Metrics): AccessRecorder {
  app.decorateRequest('accessLog', null);
  // The app's logger without redaction (see the file comment); silent when the app is.
  const access = app.log.child({}, { redact: { paths: [] } }) as Access;
  const write = flatLineWriter(access as unknown as Logger, 'request');

  // Error bodies (errors.ts) are `{ error: code, message, requestId, ...extra }`, or on the
  // OpenAI-style /v1 routes `{ error: { message, type, code, ...extra }, requestId }`: take
  // the code and reason before they are serialized (a 402 body is one: `payment_required`).
  app.addHook('preSerialization', (request, reply, payload, done) => {
    if (reply.statusCode >= 400 && payload !== null && typeof payload === 'object')
      noteErrorBody(accessLogFor(request), payload);
    done(null, payload);
  });

  const record: AccessRecorder = (reqId, method, url, routePattern, status, elapsedMs, known) => {
    const route = routeFamily(routePattern);
    metrics.httpRequests.inc({ route, method, status: String(status) });
    metrics.httpDuration.observe({ route }, elapsedMs / 1000);
    if (status === 402) metrics.paymentRequired.inc({ route });
    writeLine(access, write, reqId, method, url, route, status, elapsedMs, known);
  };

  app.addHook('onResponse', (request, reply, done) => {
    const arrived = arrivals.get(request.raw);
    record(
      request.id,
      request.method,
      request.url,
      request.routeOptions.url,
      reply.statusCode,
      arrived === undefined ? reply.elapsedTime : performance.now() - arrived,
      request.accessLog,
    );
    done();
  });
  return record;
}

function writeLine(
  access: Access,
  write: FlatLineWriter,
  reqId: string,
  method: string,
  url: string,
  route: string,
  status: number,
  elapsedMs: number,
  known: AccessLog | null,
): void {
  const level = status >= 400 || known?.tx !== undefined ? 'info' : 'debug';
  if (!access.isLevelEnabled(level)) return;
  const line = known ?? newAccessLog();
  line.reqId = reqId;
  const q = url.indexOf('?');
  line.method = method;
  line.path = q === -1 ? url : url.slice(0, q);
  line.route = route;
  line.status = status;
  line.ms = Math.round(elapsedMs);
  write(level, line as unknown as FlatFields);
}
