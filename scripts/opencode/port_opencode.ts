// The OpenCode port: runs scenario vectors through the OpenCode plugin on a model of OpenCode's
// session store (see opencode_scenario_runner.ts), comparing OpenCode's texts with each vector
// rewritten into OpenCode's terms, and lists the vectors that do not apply and why (the rule and
// the rewrite: opencode_expectations.ts).
//
//   deno task port:opencode [vectors/scenario | <file.json> ...]
//       runs the vectors; prints FAIL lines, the vectors that do not apply (grouped by reason),
//       then `N passed, N failed, N not applicable`
//   deno task port:opencode --stdin
//       port contract: ONE scenario input on stdin, ONE result object on stdout (texts name the
//       project directory as /project); compare it with the rewritten vector, not pi's texts
import { homedir } from "node:os";
import { portMain } from "../port_main.ts";
import {
  NOT_APPLICABLE,
  type NotApplicableReason,
  openCodeVector,
  portableOutput,
} from "./opencode_expectations.ts";
import { runScenarioOnOpenCode } from "./opencode_scenario_runner.ts";

await portMain(Deno.args, {
  tempPrefix: "readcache-port-opencode-",
  run: async (v, cwd) => portableOutput(await runScenarioOnOpenCode(v, cwd, homedir()), cwd),
  label: "port: OpenCode plugin + a model of OpenCode's session store",
  prepare: (v) => {
    const oc = openCodeVector(v);
    return oc.applies ? { vector: oc.vector } : { reasons: oc.reasons as Record<string, number[]> };
  },
  reasonText: (why) => NOT_APPLICABLE[why as NotApplicableReason],
  usage: [
    "usage: deno task port:opencode [vectors/scenario | <file.json> ...]",
    "       deno task port:opencode --stdin",
    "",
    "Runs scenario vectors through the OpenCode plugin on a model of OpenCode's session store,",
    "each vector rewritten into OpenCode's texts; prints FAIL lines, the vectors that do not apply",
    "(by reason), then `N passed, N failed, N not applicable`. --stdin is the port contract",
    "(SPEC §10): one scenario input on stdin, one result object on stdout (texts name the project",
    "directory as /project).",
  ].join("\n"),
});
