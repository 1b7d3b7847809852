/**
 * nginx as the reverse-proxy baseline: a minimal config in a temp dir (one worker,
 * keep-alive pool to the upstream, HTTP/1.1 upstream), run in the foreground as a
 * pinned child of the bench.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Child, spawnPinned } from './children.ts';
import { waitForPort } from './net.ts';

export interface NginxOptions {
  binary: string;
  dir: string;
  port: number;
  upstreamPort: number;
  cpu: string;
}

export function nginxConf(o: NginxOptions): string {
  const t = (name: string) => join(o.dir, name);
  return `worker_processes 1;
daemon off;
pid ${t('nginx.pid')};
error_log ${t('error.log')} warn;
events { worker_connections 4096; }
http {
  # Same per-request logging work as the gateway (which logs at info to /dev/null).
  access_log /dev/null combined;
  client_body_temp_path ${t('client_body')};
  proxy_temp_path ${t('proxy_temp')};
  fastcgi_temp_path ${t('fastcgi_temp')};
  uwsgi_temp_path ${t('uwsgi_temp')};
  scgi_temp_path ${t('scgi_temp')};
  keepalive_timeout 60s;
  keepalive_requests 1000000;
  upstream bench_upstream {
    server 127.0.0.1:${o.upstreamPort};
    keepalive 64;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${o.port};
    location / {
      proxy_pass http://bench_upstream;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_connect_timeout 10s;
      proxy_read_timeout 10s;
      proxy_send_timeout 10s;
    }
  }
}
`;
}

export async function startNginx(o: NginxOptions): Promise<Child> {
  mkdirSync(o.dir, { recursive: true });
  const conf = join(o.dir, 'nginx.conf');
  writeFileSync(conf, nginxConf(o));
  const child = await spawnPinned({
    name: 'nginx',
    cpu: o.cpu,
    command: o.binary,
    args: ['-p', o.dir, '-c', conf, '-e', join(o.dir, 'error.log')],
    announces: false,
  });
  await waitForPort(o.port, 10_000, () => child.stderr());
  return child;
}
