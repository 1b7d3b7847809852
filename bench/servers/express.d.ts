/** The slice of express 5 the bench uses (@types/express is not installed). */
declare module 'express' {
  import type { IncomingMessage, Server, ServerResponse } from 'node:http';

  export interface Request extends IncomingMessage {}
  export interface Response extends ServerResponse {
    json(body: unknown): this;
  }
  export type NextFunction = (err?: unknown) => void;
  export type Handler = (req: Request, res: Response, next: NextFunction) => unknown;
  export interface Express {
    disable(setting: string): this;
    use(handler: Handler): this;
    get(path: string, handler: Handler): this;
    listen(port: number, host: string, callback: () => void): Server;
  }
  export default function express(): Express;
}
