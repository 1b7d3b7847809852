/** Types of node-preflight.mjs (plain JavaScript, so that any Node can run it). */
export declare const NODE_NEEDED: string;
export declare function nodeProblem(version: string, typescript: unknown, execPath?: string): string | null;
export declare function requireNode(): void;
