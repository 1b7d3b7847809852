/**
 * Graceful close. Fastify's close stops accepting, answers new requests on open
 * connections 503 (return503OnClosing) and closes the connections that are idle at that
 * moment; a connection still carrying a response is left to finish it. But once that
 * response is done, Node keeps the connection open for the keep-alive timeout (72 s by
 * default) and the close waits for it. So when the close begins, the keep-alive timeout
 * drops to 1 ms: every response still in flight is delivered whole, and its connection is
 * closed right after it. Nothing on the request path pays for this.
 */
import type { FastifyInstance } from 'fastify';

export function closeConnectionsAfterLastResponse(app: FastifyInstance): void {
  app.addHook('preClose', (done) => {
    app.server.keepAliveTimeout = 1;
    // Node 24 adds this buffer (1 s by default) to the keep-alive timeout of every socket.
    app.server.keepAliveTimeoutBuffer = 0;
    done();
  });
}
