/**
 * Fastify's per-request logger (`request.log`), made only when a line is written.
 * Fastify calls the child-logger factory for every request; a pino child costs an
 * object and the JSON of its bindings (`reqId`) each time, ~2 % of a 402 in the
 * profile, while most requests never log through it (the access line has its own
 * logger). The real child is made on first use, with the same bindings and options.
 */
import type { FastifyBaseLogger } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;
type LogFn = (...args: unknown[]) => void;

class LazyRequestLogger {
  #parent: FastifyBaseLogger;
  #bindings: Bindings;
  #opts: ChildOptions;
  #real: FastifyBaseLogger | null = null;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, opts: ChildOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#opts = opts;
  }

  get real(): FastifyBaseLogger {
    this.#real ??= this.#parent.child(this.#bindings, this.#opts);
    return this.#real;
  }

  get level(): string {
    return this.real.level;
  }
  set level(level: string) {
    this.real.level = level;
  }
  isLevelEnabled(level: string): boolean {
    return (this.real as unknown as { isLevelEnabled(l: string): boolean }).isLevelEnabled(level);
  }
  fatal(...args: unknown[]): void {
    (this.real.fatal as LogFn)(...args);
  }
  error(...args: unknown[]): void {
    (this.real.error as LogFn)(...args);
  }
  warn(...args: unknown[]): void {
    (this.real.warn as LogFn)(...args);
  }
  info(...args: unknown[]): void {
    (this.real.info as LogFn)(...args);
  }
  debug(...args: unknown[]): void {
    (this.real.debug as LogFn)(...args);
  }
  trace(...args: unknown[]): void {
    (this.real.trace as LogFn)(...args);
  }
  silent(...args: unknown[]): void {
    (this.real.silent as LogFn)(...args);
  }
  child(bindings: Bindings, opts?: ChildOptions): FastifyBaseLogger {
    return this.real.child(bindings, opts);
  }
}

/** Fastify's `childLoggerFactory`: a request logger that becomes a pino child when first used. */
export function lazyRequestLogger(
  parent: FastifyBaseLogger,
  bindings: Bindings,
  opts: ChildOptions,
): FastifyBaseLogger {
  return new LazyRequestLogger(parent, bindings, opts) as unknown as FastifyBaseLogger;
}
