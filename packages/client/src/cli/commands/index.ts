/** Every CLI command group. Adding a group: create `<group>.ts` exporting `commands`, add one line here. */
import type { CliCommand } from '../command.ts';
import { commands as apis } from './apis.ts';
import { commands as auth } from './auth.ts';
import { commands as consoleCommands } from './console.ts';
import { commands as demo } from './demo.ts';
import { commands as endpoints } from './endpoints.ts';
import { commands as funds } from './funds.ts';
import { commands as mcp } from './mcp.ts';
import { commands as payer } from './payer.ts';
import { commands as projects } from './projects.ts';
import { commands as rails } from './rails.ts';

export const COMMANDS: readonly CliCommand[] = [
  ...auth,
  ...consoleCommands,
  ...projects,
  ...apis,
  ...endpoints,
  ...rails,
  ...payer,
  ...funds,
  ...mcp,
  ...demo,
];
