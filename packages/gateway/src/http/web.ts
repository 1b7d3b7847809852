/**
 * The web UI (docs/web.md): the directory pages (web-directory.ts), the provider console
 * (web/console/, a static app), shared assets (web/assets/) and a few vendor ES modules
 * (/assets/vendor/, see web-static.ts).
 *
 * Every answer here carries a strict Content-Security-Policy: scripts, styles and
 * connections only from this origin, no inline scripts or styles, no frames. The pages
 * make no request to any other origin. These routes are hidden from the OpenAPI document.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { sendError } from './error-handling.ts';
import { directoryPages } from './web-directory.ts';
import {
  createFileCache,
  HIDDEN_ROUTE,
  vendorModule,
  WEB_ROOT,
  type WebFile,
  webSecurityHeaders,
} from './web-static.ts';

/** Sends a file with its ETag, or 304 when the browser already has it. */
function sendFile(request: FastifyRequest, reply: FastifyReply, file: WebFile, cacheControl: string) {
  webSecurityHeaders(reply).headers({ etag: file.etag, 'cache-control': cacheControl });
  const match = request.headers['if-none-match'];
  if (match?.split(',').some((t) => t.trim() === file.etag)) {
    return reply.code(304).send();
  }
  return reply.type(file.contentType).send(file.body);
}

function notFound(request: FastifyRequest, reply: FastifyReply) {
  return sendError(webSecurityHeaders(reply), 'not_found', `no route for GET ${request.url.split('?')[0]}`);
}

const ASSET_CACHE = 'public, max-age=300';
// The console's page changes with each release; the browser asks again (a 304 is cheap).
const PAGE_CACHE = 'no-cache';

export function webRoutes(app: FastifyInstance, deps: Deps): void {
  const assets = createFileCache(`${WEB_ROOT}assets`);
  const consoleFiles = createFileCache(`${WEB_ROOT}console`);

  app.register(async (scope) => {
    scope.get<{ Params: { '*': string } }>('/assets/vendor/*', HIDDEN_ROUTE, async (request, reply) => {
      const file = vendorModule(request.params['*']);
      return file ? sendFile(request, reply, file, ASSET_CACHE) : notFound(request, reply);
    });

    scope.get<{ Params: { '*': string } }>('/assets/*', HIDDEN_ROUTE, async (request, reply) => {
      const file = await assets(request.params['*']);
      return file ? sendFile(request, reply, file, ASSET_CACHE) : notFound(request, reply);
    });

    // `tollgate console` opens /console#token=…; the page loads its modules by absolute URL.
    const consolePage = async (request: FastifyRequest, reply: FastifyReply) => {
      const file = await consoleFiles('index.html');
      return file ? sendFile(request, reply, file, PAGE_CACHE) : notFound(request, reply);
    };
    scope.get('/console', HIDDEN_ROUTE, consolePage);
    scope.get<{ Params: { '*': string } }>('/console/*', HIDDEN_ROUTE, async (request, reply) => {
      const name = request.params['*'];
      if (name === '' || name === 'index.html') return consolePage(request, reply);
      const file = await consoleFiles(name);
      return file ? sendFile(request, reply, file, PAGE_CACHE) : notFound(request, reply);
    });

    directoryPages(scope, deps);
  });
}
