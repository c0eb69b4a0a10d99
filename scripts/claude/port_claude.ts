// The Claude Code port: runs scenario vectors through the Claude Code host on a model of Claude
// Code's transcript and tools (see claude_scenario_runner.ts), comparing the texts the model gets
// with each vector in Claude Code's terms, and lists the vectors that do not apply and why (the
// rule and the rewrite: claude_expectations.ts).
//
//   deno task port:claude-code [vectors/scenario | <file.json> ...]
//       runs the vectors; prints FAIL lines, the vectors that do not apply (grouped by reason),
//       then `N passed, N failed, N not applicable`
//   deno task port:claude-code --stdin
//       port contract: ONE scenario input on stdin, ONE result object on stdout
import { homedir } from "node:os";
import { portMain } from "../port_main.ts";
import { claudeVector, NOT_APPLICABLE, type NotApplicableReason } from "./claude_expectations.ts";
import { runScenarioOnClaude } from "./claude_scenario_runner.ts";

await portMain(Deno.args, {
  tempPrefix: "readcache-port-claude-",
  run: (v, cwd) => runScenarioOnClaude(v, cwd, homedir()),
  label: "port: Claude Code host + a model of Claude Code's transcript and tools",
  prepare: (v) => {
    const c = claudeVector(v);
    return c.applies ? { vector: c.vector } : { reasons: c.reasons as Record<string, number[]> };
  },
  reasonText: (why) => NOT_APPLICABLE[why as NotApplicableReason],
  usage: [
    "usage: deno task port:claude-code [vectors/scenario | <file.json> ...]",
    "       deno task port:claude-code --stdin",
    "",
    "Runs scenario vectors through the Claude Code host on a model of Claude Code's transcript and",
    "tools, each vector in Claude Code's terms; prints FAIL lines, the vectors that do not apply",
    "(by reason), then `N passed, N failed, N not applicable`. --stdin is the port contract",
    "(SPEC §10): one scenario input on stdin, one result object on stdout.",
  ].join("\n"),
});
