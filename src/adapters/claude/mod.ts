/**
 * The Claude Code host of `@readcache/core` (SPEC §11.9): the transcript
 * mapping, the hook handler, the service on a Unix socket in a directory
 * only the user can open, and the hook client Claude Code's command hooks
 * run to reach it.
 *
 * @example
 * ```ts ignore
 * import { startClaudeCodeService } from "@readcache/core/claude-code";
 * const service = await startClaudeCodeService({ dir: "/home/me/.claude/readcache" });
 * ```
 *
 * @module
 */
export * from "./host.ts";
export * from "./service.ts";
export * from "./hook_client.ts";
export * from "./private_dir.ts";
