// `deno task conformance`: the conformance runner (src/conformance/runner.ts, also published as
// `@readcache/core/conformance`). See `deno task conformance --help` and SPEC §10.
import { main } from "../src/conformance/runner.ts";

Deno.exit(await main(Deno.args));
