/**
 * The demo upstream that sandbox mode sells: a tiny JSON API on loopback.
 * Deterministic answers, so the demo and the tests can check what came back.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DemoApi {
  url: string;
  /** Requests seen, newest last (method, url, headers) — for tests and the demo printout. */
  seen: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

const FORECASTS = ['sunny', 'cloudy', 'rain', 'snow', 'windy', 'fog'];

function forecast(city: string) {
  let h = 0;
  for (const ch of city) h = (h * 31 + ch.codePointAt(0)!) >>> 0;
  return { city, forecast: FORECASTS[h % FORECASTS.length], temperatureC: (h % 35) - 5 };
}

export async function startDemoApi(
  opts: { port?: number; host?: string; apiKey?: string } = {},
): Promise<DemoApi> {
  const seen: DemoApi['seen'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (seen.length > 1000) seen.shift();
      const url = new URL(req.url ?? '/', 'http://demo');
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (opts.apiKey && req.headers['x-api-key'] !== opts.apiKey)
        return json(401, { error: 'missing or wrong x-api-key' });
      if (url.pathname === '/' || url.pathname === '/health') return json(200, { ok: true });
      if (url.pathname === '/weather' && req.method === 'GET')
        return json(200, forecast(url.searchParams.get('city') ?? 'Oslo'));
      if (url.pathname === '/echo' && req.method === 'POST') {
        let parsed: unknown = body;
        try {
          parsed = JSON.parse(body);
        } catch {
          // Echo non-JSON bodies as text.
        }
        return json(200, { received: parsed, contentType: req.headers['content-type'] ?? null });
      }
      if (url.pathname === '/fortune' && req.method === 'GET')
        return json(200, { fortune: 'A paid request is a kept promise.' });
      return json(404, { error: 'not found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
