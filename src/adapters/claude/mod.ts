/**
 * The Claude Code host of `@readcache/core` (SPEC §11.9): the transcript
 * mapping, the hook handler and the loopback service its HTTP hooks reach.
 *
 * @example
 * ```ts ignore
 * import { startClaudeCodeService } from "@readcache/core/claude-code";
 * const service = startClaudeCodeService({ port: 7411, secret });
 * ```
 *
 * @module
 */
export * from "./host.ts";
export * from "./service.ts";
