/** What the bench ran on, for the report. */
import { readFileSync } from 'node:fs';
import { availableParallelism, release, totalmem } from 'node:os';
import { DatabaseSync } from 'node:sqlite';
import { versionOf } from './tools.ts';

export interface Machine {
  cpu: string;
  cpus: number;
  memoryGB: number;
  kernel: string;
  os: string;
  node: string;
  sqlite: string;
  wrk: string;
  nginx: string;
}

export function describeMachine(paths: Record<string, string>): Machine {
  const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
  let os = 'unknown';
  try {
    os = /PRETTY_NAME="([^"]*)"/.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? os;
  } catch {
    // not Linux-like
  }
  const db = new DatabaseSync(':memory:');
  const sqlite = String((db.prepare('select sqlite_version() as v').get() as { v: string }).v);
  db.close();
  return {
    cpu,
    cpus: availableParallelism(),
    memoryGB: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    os,
    node: process.version,
    sqlite,
    wrk: versionOf(paths['wrk']!, ['-v']).split(' [')[0]!,
    nginx: versionOf(paths['nginx']!, ['-v']),
  };
}
