// Writes a Claude Code session transcript the way Claude Code 2.1.332 does, for benches and tests
// that drive a ClaudeCodeHost without the binary: per tool call an assistant row holding the
// tool_use, then a user row holding its tool_result and `toolUseResult` (for a Read: what the
// hook answered, as Claude Code stores the replacement), plus the bookkeeping rows Claude Code
// adds (request blobs without a uuid, hook attachments). The project holds FILES text files of 200
// lines; every seventh step changes one of them on disk; every fifth is a command (`ls`)
// whose record the host makes, as Claude Code's hook for Bash has it do.
import { join } from "node:path";
import type { ClaudeCodeHost, ClaudeHookOutput } from "../../src/adapters/claude/host.ts";
import { claudeReadText } from "../../src/adapters/claude/host.ts";

const BLOB = "x".repeat(3000);

/** A Read whose assistant row is written and whose hook is still to be called. */
export interface PendingRead {
  /** The hook input for the call. */
  input: Record<string, unknown>;
  /** Writes the result row with the hook's answer (or Claude Code's own result). */
  finish(out: ClaudeHookOutput): Promise<void>;
}

/** The writer. */
export class ClaudeTranscriptWriter {
  /** Rows written that carry a uuid. */
  rows = 0;
  #parent: string | null = null;
  #n = 0;
  #buffer: string[] = [];

  private constructor(
    /** The transcript file. */
    readonly path: string,
    /** The project directory. */
    readonly work: string,
    readonly files: number,
  ) {}

  /** A project with `files` files and an empty transcript under `dir`. */
  static async create(dir: string, files: number): Promise<ClaudeTranscriptWriter> {
    const work = join(dir, "work");
    const projects = join(dir, "home", ".claude", "projects", "-work");
    await Deno.mkdir(work, { recursive: true });
    await Deno.mkdir(projects, { recursive: true });
    for (let f = 0; f < files; f++) {
      const lines = Array.from(
        { length: 200 },
        (_, i) => `file ${f} line ${i + 1}: some code here`,
      );
      await Deno.writeTextFile(join(work, `f${f}.ts`), lines.join("\n") + "\n");
    }
    const path = join(projects, "session-1.jsonl");
    await Deno.writeTextFile(path, "");
    return new ClaudeTranscriptWriter(path, work, files);
  }

  #row(row: Record<string, unknown>): string {
    const uuid = `row-${++this.#n}`;
    this.#buffer.push(JSON.stringify({ parentUuid: this.#parent, ...row, uuid, sessionId: "s1" }));
    this.#parent = uuid;
    this.rows++;
    return uuid;
  }

  async #flush(): Promise<void> {
    await Deno.writeTextFile(this.path, this.#buffer.join("\n") + "\n", { append: true });
    this.#buffer = [];
  }

  #assistant(step: number, use: Record<string, unknown>): string {
    if (step % 4 === 0) {
      this.#row({ type: "user", message: { role: "user", content: `step ${step}` } });
    }
    this.#buffer.push(JSON.stringify({ type: "api-request-blob", hash: `h${step}`, blob: BLOB }));
    return this.#row({
      type: "assistant",
      message: { id: `msg_${step}`, role: "assistant", content: [{ type: "tool_use", ...use }] },
    });
  }

  #result(callId: string, text: string, toolUseResult: unknown): void {
    this.#row({
      type: "user",
      message: {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: callId, content: text }],
      },
      toolUseResult,
    });
    this.#row({ type: "attachment", attachment: { type: "hook_success", toolUseID: callId } });
  }

  /** Writes the assistant row of a Read of one of the files; call the hook, then `finish`. */
  async pendingRead(step: number): Promise<PendingRead> {
    if (step % 7 === 6) {
      const f = join(this.work, `f${step % this.files}.ts`);
      const text = await Deno.readTextFile(f);
      await Deno.writeTextFile(f, text.replace(/line 50:[^\n]*/, `line 50: changed at ${step}`));
    }
    const id = `toolu_${step}`;
    const filePath = join(this.work, `f${(step * 5) % this.files}.ts`);
    const assistant = this.#assistant(step, { id, name: "Read", input: { file_path: filePath } });
    await this.#flush();
    const content = await Deno.readTextFile(filePath);
    const n = content.split("\n").length;
    const response = {
      type: "text",
      file: { filePath, content, numLines: n, startLine: 1, totalLines: n },
    };
    return {
      input: {
        session_id: "s1",
        transcript_path: this.path,
        cwd: this.work,
        hook_event_name: "PostToolUse",
        tool_name: "Read",
        tool_input: { file_path: filePath },
        tool_response: response,
        tool_use_id: id,
      },
      finish: async (out) => {
        const shown = (out.hookSpecificOutput?.updatedToolOutput ?? response) as typeof response;
        this.#parent = assistant;
        this.#result(id, claudeReadText(shown.file), shown);
        await this.#flush();
      },
    };
  }

  /** One step: a Read served by `host`, or every fifth step a Bash call. */
  async step(host: ClaudeCodeHost, step: number): Promise<void> {
    if (step % 5 === 4) {
      // a command that only lists files: its record (the host's answer) says nothing changed
      const id = `toolu_${step}`;
      const input = { command: "ls" };
      const assistant = this.#assistant(step, { id, name: "Bash", input });
      await this.#flush();
      const names = Array.from({ length: this.files }, (_, f) => `f${f}.ts`).sort().join("\n");
      const response = { stdout: names, stderr: "", interrupted: false };
      const out = await host.handle({
        session_id: "s1",
        transcript_path: this.path,
        cwd: this.work,
        hook_event_name: "PostToolUse",
        tool_name: "Bash",
        tool_input: input,
        tool_response: response,
        tool_use_id: id,
      });
      this.#parent = assistant;
      this.#result(id, names, out.hookSpecificOutput?.updatedToolOutput ?? response);
      await this.#flush();
      return;
    }
    const read = await this.pendingRead(step);
    await read.finish(await host.handle(read.input));
  }
}
