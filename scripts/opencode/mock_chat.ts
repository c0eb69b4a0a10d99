// A scripted OpenAI-compatible Chat Completions server on 127.0.0.1 (streaming and plain), for
// driving a real OpenCode. A request that offers tools gets the next scripted answer (tool
// calls, or text; "done" when the script is empty); a request without tools (OpenCode's title
// and compaction prompts) gets a short text. Every request body is kept.

/** One scripted model turn: text, or tool calls made in one assistant message. */
export type MockAnswer =
  | { text: string }
  | { calls: { name: string; args: Record<string, unknown> }[] };

/** A tool call the mock made: its id, tool and arguments. */
export interface MockCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** A chat message as the mock received it. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
}

/** A request body as the mock received it. */
export interface ChatRequest {
  stream?: boolean;
  messages?: ChatMessage[];
  tools?: { function?: { name?: string; description?: string } }[];
}

/** The running mock. */
export interface MockChat {
  /** Base URL for `@ai-sdk/openai-compatible` (`http://127.0.0.1:<port>/v1`). */
  baseURL: string;
  /** Answers still to give, in order. */
  queue: MockAnswer[];
  /** Every request received. */
  requests: ChatRequest[];
  /** Every tool call made, in order. */
  calls: MockCall[];
  /** Stops the server. */
  close(): Promise<void>;
}

const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

/** Starts the mock on a free port. */
export function startMockChat(): MockChat {
  const queue: MockAnswer[] = [];
  const requests: ChatRequest[] = [];
  const calls: MockCall[] = [];
  let n = 0;
  const respond = (body: ChatRequest, answer: MockAnswer): Response => {
    const id = `chatcmpl-${++n}`;
    const base = { id, object: "chat.completion.chunk", created: 0, model: "mock-model" };
    const made = "calls" in answer
      ? answer.calls.map((c) => {
        const call = { id: `call_${calls.length + 1}`, name: c.name, args: c.args };
        calls.push(call);
        return call;
      })
      : [];
    const finish = made.length > 0 ? "tool_calls" : "stop";
    const toolCalls = made.map((c, index) => ({
      index,
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: JSON.stringify(c.args) },
    }));
    const delta = made.length > 0
      ? { role: "assistant", content: null, tool_calls: toolCalls }
      : { role: "assistant", content: "text" in answer ? answer.text : "" };
    if (body.stream === false) {
      const message = made.length > 0
        ? { role: "assistant", content: null, tool_calls: toolCalls.map(({ index: _, ...c }) => c) }
        : { role: "assistant", content: delta.content };
      return Response.json({
        id,
        object: "chat.completion",
        created: 0,
        model: "mock-model",
        choices: [{ index: 0, message, finish_reason: finish }],
        usage: USAGE,
      });
    }
    const chunks = [
      { ...base, choices: [{ index: 0, delta, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage: USAGE },
    ];
    const sse = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n";
    return new Response(sse, { headers: { "content-type": "text/event-stream" } });
  };
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      if (req.method !== "POST" || !url.pathname.endsWith("/chat/completions")) {
        return new Response("not found", { status: 404 });
      }
      const body = await req.json() as ChatRequest;
      requests.push(body);
      if (!Array.isArray(body.tools) || body.tools.length === 0) {
        return respond(body, { text: "Summary: the user asked for reads; they were done." });
      }
      return respond(body, queue.shift() ?? { text: "done" });
    },
  );
  return {
    baseURL: `http://127.0.0.1:${server.addr.port}/v1`,
    queue,
    requests,
    calls,
    close: () => server.shutdown(),
  };
}
