// A scripted Anthropic Messages API on 127.0.0.1 (streaming, as Claude Code calls it), for
// driving a real Claude Code offline. A request that offers the Read tool is a turn of the main
// agent or a subagent: it gets the next scripted answer for that agent (tool calls, or text;
// "done" when its script is empty). Any other request (titles, summaries for /compact, quota
// probes) gets a short text. Every request body is kept.

import { claudeResultText } from "../../src/adapters/claude/transcript.ts";

/** One scripted model turn: text, or tool calls made in one assistant message. */
export type FakeAnswer =
  | { text: string }
  | { calls: { name: string; input: Record<string, unknown> }[] };

/** A tool call the fake made: its id, tool and input. */
export interface FakeCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** A Messages API request body as the fake received it. */
export interface MessagesRequest {
  model?: string;
  system?: unknown;
  messages?: { role: string; content: unknown }[];
  tools?: { name?: string }[];
  stream?: boolean;
}

/** The running fake. */
export interface FakeMessagesApi {
  /** `ANTHROPIC_BASE_URL` for Claude Code (`http://127.0.0.1:<port>`). */
  baseURL: string;
  /** The main agent's answers still to give, in order. */
  queue: FakeAnswer[];
  /**
   * A subagent's answers (a request whose messages contain a key of this map takes its answers
   * from it).
   */
  agents: Map<string, FakeAnswer[]>;
  /** Every request received. */
  requests: MessagesRequest[];
  /** When each request arrived (`performance.now()`). */
  arrivals: number[];
  /** Every tool call made, in order. */
  calls: FakeCall[];
  /** Stops the server. */
  close(): Promise<void>;
}

function sse(events: Record<string, unknown>[]): string {
  return events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
}

/** The text of a message's content (a string, or its text blocks joined). */
export const contentText: (content: unknown) => string = claudeResultText;

/**
 * Starts the fake on a free port. `sameIds`: every response carries the same API id (as a gateway
 * or a scripted API that restarts its ids may give), which the host must not rely on.
 */
export function startFakeMessagesApi(options: { sameIds?: boolean } = {}): FakeMessagesApi {
  const queue: FakeAnswer[] = [];
  const agents = new Map<string, FakeAnswer[]>();
  const requests: MessagesRequest[] = [];
  const arrivals: number[] = [];
  const calls: FakeCall[] = [];
  let n = 0;
  const respond = (answer: FakeAnswer): Response => {
    const id = options.sameIds ? "msg_fake_same" : `msg_fake_${++n}`;
    const events: Record<string, unknown>[] = [{
      type: "message_start",
      message: {
        id,
        type: "message",
        role: "assistant",
        model: "claude-fake",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 1 },
      },
    }];
    let stop = "end_turn";
    if ("calls" in answer) {
      stop = "tool_use";
      answer.calls.forEach((c, index) => {
        const call = { id: `toolu_fake_${calls.length + 1}`, name: c.name, input: c.input };
        calls.push(call);
        events.push(
          {
            type: "content_block_start",
            index,
            content_block: { type: "tool_use", id: call.id, name: c.name, input: {} },
          },
          {
            type: "content_block_delta",
            index,
            delta: { type: "input_json_delta", partial_json: JSON.stringify(c.input) },
          },
          { type: "content_block_stop", index },
        );
      });
    } else {
      events.push(
        { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
        { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: answer.text } },
        { type: "content_block_stop", index: 0 },
      );
    }
    events.push(
      {
        type: "message_delta",
        delta: { stop_reason: stop, stop_sequence: null },
        usage: { output_tokens: 5 },
      },
      { type: "message_stop" },
    );
    return new Response(sse(events), {
      headers: { "content-type": "text/event-stream", "request-id": id },
    });
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    if (req.method !== "POST" || !url.pathname.endsWith("/v1/messages")) {
      if (url.pathname.endsWith("/count_tokens")) return Response.json({ input_tokens: 10 });
      return Response.json({}, { status: 404 });
    }
    const body = await req.json() as MessagesRequest;
    requests.push(body);
    arrivals.push(performance.now());
    const offersRead = (body.tools ?? []).some((t) => t.name === "Read");
    const last = contentText(body.messages?.at(-1)?.content);
    // titles and the like offer no tools; /compact's summary request tells the model to use none
    if (!offersRead || /Do NOT call any tools/.test(last)) {
      return respond({ text: "Summary: the session read some files." });
    }
    // a background agent's notification is not a turn of the script
    if (/SYSTEM NOTIFICATION - NOT USER INPUT/.test(last)) return respond({ text: "noted" });
    const all = (body.messages ?? []).map((m) => contentText(m.content)).join("\n");
    for (const [key, script] of agents) {
      if (all.includes(key)) return respond(script.shift() ?? { text: "done" });
    }
    return respond(queue.shift() ?? { text: "done" });
  });
  const addr = server.addr as Deno.NetAddr;
  return {
    baseURL: `http://127.0.0.1:${addr.port}`,
    queue,
    agents,
    requests,
    arrivals,
    calls,
    close: () => server.shutdown(),
  };
}
