// An ACP client built on the official TypeScript SDK
// (@agentclientprotocol/sdk), playing an editor against `reasonix acp`.
// Usage: node client.mjs MODE
//   MODE "turns": initialize, open a session, run a prompt that reads and
//                 edits a file (the edit's permission request is allowed),
//                 run a second prompt and cancel it at its permission
//                 request, switch to auto and write a file, answer the
//                 ask tool's question by picking a choice, then list
//                 sessions.
//   MODE "load":  initialize and load the session $ACP_SESSION.
//   MODE "prompts": initialize, open a session and send each line of
//                 $ACP_PROMPTS as a prompt, in order (stop reasons in
//                 "stops"). With $ACP_ANSWER set, every permission
//                 request is answered with that option when it offers it;
//                 with $ACP_WAIT_FILE set, the first prompt waits until
//                 that file holds $ACP_WAIT_TEXT.
//   MODE "dangling": initialize, open a session and send a prompt; at its
//                 permission request, cancel the prompt and keep the
//                 request open until the agent cancels it ($/cancel_request,
//                 "withdrawn": true) or 10 s pass, then answer allow (an
//                 editor that ignores the protocol's cancelled outcome).
// $ACP_ARGS (words split at spaces) are added to `reasonix acp`.
// It prints one JSON object with everything it saw; the Go test checks it.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const mode = process.argv[2];
const cwd = process.env.ACP_CWD;
const args = ["acp", ...(process.env.ACP_ARGS || "").split(" ").filter((a) => a)];
const child = spawn(process.env.REASONIX_BIN, args, { cwd, stdio: ["pipe", "pipe", "inherit"] });
const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const seen = { updates: [], permissions: [], reads: [], writes: [] };
let onPermission = () => ({ outcome: { outcome: "cancelled" } });

const app = client({ name: "reasonix-acp-test" })
  .onNotification(methods.client.session.update, ({ params }) => {
    seen.updates.push(params);
  })
  // The editor's buffers: greet.go is open with an unsaved change.
  .onRequest(methods.client.fs.readTextFile, ({ params }) => {
    seen.reads.push(params.path);
    if (params.path.endsWith("/greet.go")) return { content: 'package main\n\nconst greeting = "hello" // unsaved buffer\n' };
    throw new Error("not open in the editor");
  })
  .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
    seen.writes.push(params);
    return {};
  })
  .onRequest(methods.client.session.requestPermission, async ({ params, agent, signal }) => {
    seen.permissions.push(params);
    return onPermission(params, agent, signal);
  });

const timeout = setTimeout(() => {
  console.error("client: timed out");
  child.kill("SIGKILL");
  process.exit(3);
}, 60000);

try {
  await app.connectWith(stream, async (ctx) => {
    seen.init = await ctx.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: mode !== "load", writeTextFile: mode !== "load" }, terminal: false },
    });
    if (mode === "load") {
      seen.load = await ctx.request(methods.agent.session.load, {
        sessionId: process.env.ACP_SESSION, cwd, mcpServers: [],
      });
      return;
    }
    const s = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
    seen.sessionId = s.sessionId;
    seen.modes = s.modes;
    if (mode === "dangling") {
      let answered;
      const handled = new Promise((resolve) => { answered = resolve; });
      onPermission = async (p, agent, signal) => {
        await agent.notify(methods.agent.session.cancel, { sessionId: s.sessionId });
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, 10000);
          signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); });
        });
        seen.withdrawn = signal.aborted;
        answered();
        return { outcome: { outcome: "selected", optionId: "allow" } };
      };
      seen.first = await ctx.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text: "remove the build output" }] });
      await handled;
      // The next prompt runs in the same session: nothing is left waiting.
      onPermission = () => ({ outcome: { outcome: "cancelled" } });
      seen.second = await ctx.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text: "what happened?" }] });
      return;
    }
    if (mode === "prompts") {
      const pick = process.env.ACP_ANSWER;
      if (pick) {
        onPermission = (p) => p.options.some((o) => o.optionId === pick)
          ? { outcome: { outcome: "selected", optionId: pick } } : { outcome: { outcome: "cancelled" } };
      }
      seen.stops = [];
      const file = process.env.ACP_WAIT_FILE;
      while (file) {
        let text = "";
        try { text = readFileSync(file, "utf8"); } catch { /* not there yet */ }
        if (text.includes(process.env.ACP_WAIT_TEXT)) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      for (const text of process.env.ACP_PROMPTS.split("\n")) {
        const r = await ctx.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text }] });
        seen.stops.push(r.stopReason);
      }
      return;
    }
    onPermission = (p) => ({ outcome: { outcome: "selected", optionId: "allow" } });
    seen.first = await ctx.request(methods.agent.session.prompt, {
      sessionId: s.sessionId,
      prompt: [
        { type: "text", text: "make the greeting say hello, world" },
        { type: "resource", resource: { uri: "file://" + cwd + "/notes.txt", text: "unsaved editor text" } },
      ],
    });
    seen.afterFirst = seen.updates.length;
    onPermission = async (p, agent) => {
      await agent.notify(methods.agent.session.cancel, { sessionId: s.sessionId });
      return { outcome: { outcome: "cancelled" } };
    };
    seen.second = await ctx.request(methods.agent.session.prompt, {
      sessionId: s.sessionId, prompt: [{ type: "text", text: "remove the build output" }],
    });
    // A person switches the posture to auto: a write no longer asks.
    onPermission = () => ({ outcome: { outcome: "cancelled" } });
    await ctx.request(methods.agent.session.setMode, { sessionId: s.sessionId, modeId: "auto" });
    seen.third = await ctx.request(methods.agent.session.prompt, {
      sessionId: s.sessionId, prompt: [{ type: "text", text: "write the notes file" }],
    });
    // The model asks with choices (the editor picks "green"), then
    // without (no request: it assumes).
    onPermission = (p) => {
      const o = p.options.find((o) => o.name === "green");
      return o ? { outcome: { outcome: "selected", optionId: o.optionId } } : { outcome: { outcome: "cancelled" } };
    };
    seen.fourth = await ctx.request(methods.agent.session.prompt, {
      sessionId: s.sessionId, prompt: [{ type: "text", text: "paint the button" }],
    });
    seen.list = await ctx.request(methods.agent.session.list, {});
  });
} finally {
  clearTimeout(timeout);
  child.stdin.end();
}
const code = await new Promise((resolve) => child.on("exit", (c) => resolve(c)));
seen.exit = code;
process.stdout.write(JSON.stringify(seen));
