// The pi agent directory for a real pi process talking to a scripted mock OpenAI Chat Completions
// server: a `mock` provider with one model at `baseUrl`, and pi's own compaction off (tests compact
// on request). Shared by the RPC end-to-end test and the CLI fixture generator.
import { join } from "node:path";

/** Writes `models.json` and `settings.json` into pi's agent directory `agentDir`. */
export async function writeMockAgentConfig(agentDir: string, baseUrl: string): Promise<void> {
  await Deno.writeTextFile(
    join(agentDir, "models.json"),
    JSON.stringify({
      providers: {
        mock: {
          baseUrl,
          api: "openai-completions",
          apiKey: "mock-key",
          compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
          models: [{
            id: "mock-model",
            name: "Mock Model",
            reasoning: false,
            input: ["text"],
            contextWindow: 128000,
            maxTokens: 4096,
            cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
          }],
        },
      },
    }),
  );
  await Deno.writeTextFile(
    join(agentDir, "settings.json"),
    JSON.stringify({ compaction: { enabled: false, keepRecentTokens: 50 } }),
  );
}
