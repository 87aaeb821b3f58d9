// The browser front end of `reasonix serve`: renders the event stream
// (server-sent events, resumed after a reconnect by Last-Event-ID, replayed
// whole after a reload) and sends commands to the HTTP API. The token
// lives in a same-site, HTTP-only cookie the server set.
"use strict";

const $ = (id) => document.getElementById(id);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

const state = {
  sessions: new Map(), // id -> session view
  current: null,
  approvals: [], // queued approval and question events, shown one at a time
  plan: null, // the plan question shown
  follow: true,
};

async function api(method, path, body) {
  const res = await fetch(path, {
    method, headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined, credentials: "same-origin",
  });
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  const type = res.headers.get("Content-Type") || "";
  return type.includes("json") ? res.json() : null;
}

// ---- sessions -------------------------------------------------------

function sessionView(id) {
  let s = state.sessions.get(id);
  if (s) return s;
  const root = el("div", "transcript");
  root.dataset.session = id;
  root.hidden = true;
  $("transcripts").append(root);
  s = { id, root, answer: null, thinking: null, tools: new Map(), workers: new Map(),
    todos: null, running: false, usage: { prompt: 0, completion: 0, hit: 0, miss: 0, cost: 0, currency: "" }, goal: "", commands: [], title: "" };
  state.sessions.set(id, s);
  const li = el("li", "", id);
  li.dataset.session = id;
  li.onclick = () => show(id);
  $("open-sessions").append(li);
  s.item = li;
  return s;
}

function show(id) {
  state.current = id;
  for (const s of state.sessions.values()) {
    s.root.hidden = s.id !== id;
    s.item.classList.toggle("current", s.id === id);
  }
  $("empty").hidden = true;
  $("input").disabled = false;
  $("send").disabled = false;
  $("input").focus();
  status();
  scrollEnd(true);
}

async function newSession() {
  const r = await api("POST", "api/sessions");
  sessionView(r.id);
  show(r.id);
}

async function loadSaved() {
  const r = await api("GET", "api/sessions");
  $("version").textContent = r.version || "";
  $("workspace").textContent = r.workspace || "";
  const ul = $("saved-sessions");
  ul.replaceChildren();
  for (const s of r.saved) {
    const li = el("li", "", s.title || s.id);
    li.title = `${s.id} · ${s.turns} turns · ${s.updated}`;
    li.onclick = async () => {
      const res = await api("POST", `api/sessions/${encodeURIComponent(s.id)}/resume`);
      sessionView(res.id);
      show(res.id);
    };
    ul.append(li);
  }
}

// ---- transcript -----------------------------------------------------

function atEnd() {
  const t = $("transcripts");
  return t.scrollHeight - t.scrollTop - t.clientHeight < 40;
}

function scrollEnd(force) {
  const t = $("transcripts");
  if (force || state.follow) {
    t.scrollTop = t.scrollHeight;
    $("below").hidden = true;
  } else {
    $("below").hidden = false;
  }
}

function append(s, node) {
  s.root.append(node);
  if (s.id === state.current) scrollEnd(false);
}

// Answers render at most once a frame; each block keeps its own source,
// so a block another event has closed in the same frame still renders.
let renderQueued = new Set();
function renderAnswer(s) {
  const block = s.answer;
  block.dataset.dirty = "1";
  renderQueued.add(block);
  if (renderQueued.size > 1) return;
  requestAnimationFrame(() => {
    for (const b of renderQueued) {
      b.innerHTML = md.render(b.mdSource);
      delete b.dataset.dirty;
    }
    renderQueued = new Set();
    if (state.current) scrollEnd(false);
  });
}

// container is where a session's (or a subagent's) output goes.
function container(s, e) {
  if (e.session === e.root || !e.session) return s.root;
  let w = s.workers.get(e.session);
  if (!w) {
    w = el("details", "worker");
    w.open = true;
    // A plan step's worker is named by its step, a subagent by its role.
    w.append(el("summary", "", e.step ? `step ${e.step} · ${e.role || "executor"}` : `${e.role || "worker"} ${e.session.slice(-6)}`));
    s.workers.set(e.session, w);
    append(s, w);
  }
  return w;
}

function userTurn(s, text) {
  s.answer = null;
  s.thinking = null;
  append(s, el("div", "turn-user", text));
  if (!s.title) {
    s.title = text.slice(0, 60);
    s.item.textContent = s.title;
    s.item.title = s.id;
  }
}

function textDelta(s, e) {
  if (e.session !== e.root) {
    const w = container(s, e);
    let p = w.querySelector(":scope > .worker-text");
    if (!p) { p = el("div", "worker-text notice"); w.append(p); }
    p.textContent += e.text;
    return;
  }
  if (!s.answer) {
    s.answer = el("div", "answer md");
    append(s, s.answer);
  }
  s.answer.mdSource = (s.answer.mdSource || "") + e.text;
  renderAnswer(s);
}

function reasoning(s, e) {
  const c = container(s, e);
  if (!s.thinking || s.thinking.parentNode !== c) {
    s.thinking = el("details", "thinking");
    s.thinking.append(el("summary", "", "Thinking"), el("div"));
    c.append(s.thinking);
  }
  s.thinking.lastChild.textContent += e.text;
}

function diffPre(text) {
  const pre = el("pre", "diff");
  for (const line of text.split("\n")) {
    const cls = line.startsWith("@@") ? "hunk" : line.startsWith("+") && !line.startsWith("+++") ? "add"
      : line.startsWith("-") && !line.startsWith("---") ? "del" : "";
    pre.append(el("span", cls, line + "\n"));
  }
  return pre;
}

const looksLikeDiff = (t) => /^(---|\+\+\+|@@) /m.test(t);

function toolStart(s, e) {
  const t = e.tool;
  const d = el("details", "tool");
  const sum = el("summary");
  sum.append(el("span", "", `→ ${t.name} `), el("span", "subject", t.subject || ""));
  d.append(sum);
  s.tools.set(`${e.session}/${t.call_id}`, d);
  s.answer = null; // text after a tool call starts a new block
  container(s, e).append(d);
  if (s.id === state.current) scrollEnd(false);
}

function toolEnd(s, e) {
  const t = e.tool;
  const d = s.tools.get(`${e.session}/${t.call_id}`);
  if (!d) return;
  const ok = !(t.is_error || t.denied);
  const mark = el("span", ok ? "ok" : "bad", ok ? ` ✓ ${t.summary || ""}` : ` ✗ ${t.denied ? "denied" : t.summary || "failed"}`);
  d.firstChild.append(mark);
  if (t.result) d.append(looksLikeDiff(t.result) ? diffPre(t.result) : el("pre", "", t.result));
}

function todos(s, e) {
  if (!s.todos) {
    s.todos = el("ul", "todos");
    append(s, s.todos);
  }
  s.todos.replaceChildren(...e.todos.map((t) => el("li", t.status, `${t.status === "completed" ? "☑" : "☐"} ${t.content}`)));
  const done = e.todos.filter((t) => t.status === "completed").length;
  s.todoText = `todos ${done}/${e.todos.length}`;
  status();
}

function planBlock(s, e) {
  const b = el("div", "plan-block md");
  b.innerHTML = md.render(e.plan ? planMarkdown(e.plan) : e.text || "");
  append(s, b);
}

function planMarkdown(p) {
  if (!p) return "";
  return `**Plan:** ${p.goal}\n\n` + (p.steps || []).map((st, i) => `${i + 1}. ${st.title}` +
    (st.files && st.files.length ? ` (${st.files.join(", ")})` : "")).join("\n");
}

function history(s, e) {
  for (const m of e.messages || []) {
    if (m.role === "user") userTurn(s, m.content);
    else if (m.role === "assistant" && m.content) {
      const a = el("div", "answer md");
      a.innerHTML = md.render(m.content);
      append(s, a);
    } else if (m.role === "assistant") {
      for (const c of m.tool_calls || []) append(s, el("div", "tool", `→ ${c.function.name}`));
    }
  }
}

function usage(s, u) {
  if (!u) return;
  s.usage.prompt += u.prompt_tokens || 0;
  s.usage.completion += u.completion_tokens || 0;
  s.usage.hit += u.cache_hit_tokens || 0;
  s.usage.miss += u.cache_miss_tokens || 0;
  s.usage.cost += u.cost || 0;
  if (u.currency) s.usage.currency = u.currency;
  status();
}

function status() {
  const s = state.sessions.get(state.current);
  if (!s) return;
  $("st-session").textContent = `session ${s.id}`;
  $("st-state").textContent = s.running ? "● running" : "idle";
  $("st-goal").textContent = s.goal;
  $("st-todos").textContent = s.todoText || "";
  const u = s.usage;
  const cached = u.hit + u.miss ? ` · cache ${Math.round((100 * u.hit) / (u.hit + u.miss))}%` : "";
  const cost = u.cost ? ` · ${u.cost.toFixed(4)} ${u.currency || "USD"}` : "";
  $("st-usage").textContent = `tokens in ${u.prompt} · out ${u.completion}${cached}${cost}`;
  $("stop").disabled = !s.running;
}

// ---- questions ------------------------------------------------------

// askID is the id of a queued approval request, question or request for
// input.
const askID = (e) => (e.approval ? e.approval.id : e.question ? e.question.id : e.elicitation.id);

function nextApproval() {
  const dlg = $("approval");
  if (dlg.open || $("question").open || $("elicit").open || state.approvals.length === 0) return;
  const e = state.approvals[0];
  if (e.question) {
    showQuestion(e);
    return;
  }
  if (e.elicitation) {
    showElicitation(e);
    return;
  }
  const a = e.approval;
  dlg.dataset.id = a.id;
  $("ap-title").textContent = `${a.tool}${a.step ? ` (step ${a.step})` : ""}: ${a.subject || ""}`;
  $("ap-reason").textContent = a.reason ? `“${a.reason}”` : "";
  $("ap-impact").textContent = a.impact || "";
  $("ap-command").hidden = !a.command;
  $("ap-command").textContent = a.command || "";
  $("ap-diff").replaceChildren(...(a.preview || []).filter((p) => p.diff).map((p) => diffPre(p.diff)));
  $("ap-rules").textContent = a.rules && a.rules.length ? `“Always” saves: ${a.rules.join(", ")}` : "";
  const names = { allow: "Allow once", allow_session: "Allow for this session", allow_always: "Always allow", deny: "Deny" };
  $("ap-choices").replaceChildren(...a.choices.map((c) => {
    const b = el("button", c === "allow" ? "primary" : "", names[c] || c);
    b.type = "button";
    b.dataset.choice = c;
    b.onclick = async () => {
      try {
        await api("POST", `api/approvals/${encodeURIComponent(a.id)}`, { session: e.root, choice: c });
      } catch (err) {
        console.error(err);
      }
      closeApproval(a.id);
    };
    return b;
  }));
  dlg.showModal();
}

function closeApproval(id) {
  state.approvals = state.approvals.filter((e) => askID(e) !== id);
  for (const name of ["approval", "question", "elicit"]) {
    const dlg = $(name);
    if (dlg.open && dlg.dataset.id === id) dlg.close();
  }
  nextApproval();
}

// showQuestion shows the ask tool's question: a choice's button or typed
// text answers it; Skip (or Esc) lets the model go on under an assumption
// it states.
function showQuestion(e) {
  const q = e.question;
  const dlg = $("question");
  dlg.dataset.id = q.id;
  $("q-title").textContent = e.step ? `Step ${e.step} asks` : e.role && e.role !== "executor" ? `The ${e.role} asks` : "Question";
  $("q-text").textContent = q.text;
  const send = async (body) => {
    try {
      await api("POST", `api/questions/${encodeURIComponent(q.id)}`, Object.assign({ session: e.root }, body));
    } catch (err) {
      console.error(err);
    }
    closeApproval(q.id);
  };
  $("q-choices").replaceChildren(...(q.choices || []).map((c) => {
    const b = el("button", "", c);
    b.type = "button";
    b.onclick = () => send({ text: c });
    return b;
  }));
  $("q-answer").value = "";
  $("q-form").onsubmit = (ev) => {
    ev.preventDefault();
    const t = $("q-answer").value.trim();
    if (t) send({ text: t });
  };
  $("q-skip").onclick = () => send({ skip: true });
  dlg.oncancel = (ev) => {
    ev.preventDefault();
    send({ skip: true });
  };
  dlg.showModal();
}

// elicitationRequest queues an MCP server's request for input; the same
// request asked again (its last answer was refused) only updates the
// reason shown.
function elicitationRequest(e) {
  const id = e.elicitation.id;
  const i = state.approvals.findIndex((q) => q.elicitation && q.elicitation.id === id);
  if (i < 0) {
    state.approvals.push(e);
    nextApproval();
    return;
  }
  state.approvals[i] = e;
  if ($("elicit").open && $("elicit").dataset.id === id) $("el-error").textContent = e.elicitation.error || "";
}

// showElicitation shows an MCP server's request for input: a form built
// from its fields (values are checked by the server, which answers a bad
// one with the reason, shown here), or an address the person may open.
// Nothing is sent or opened until a button is pressed; Esc cancels.
function showElicitation(e) {
  const q = e.elicitation;
  const dlg = $("elicit");
  dlg.dataset.id = q.id;
  $("el-title").textContent = `MCP server ${q.server} asks for input`;
  $("el-message").textContent = q.message || "";
  $("el-error").textContent = q.error || "";
  const fields = $("el-fields");
  const read = [];
  if (q.mode === "url") {
    $("el-warning").textContent = "What you enter on that page goes to that site, not through Reasonix.";
    let host = "";
    try { host = new URL(q.url).hostname; } catch (err) { host = "?"; }
    const site = el("p", "", "Site: ");
    site.append(el("strong", "", host));
    if (/^xn--|\.xn--|[^\x00-\x7f]/i.test(host)) site.append(el("span", "error", " (careful: the name can imitate another site's)"));
    if (/^http:/i.test(q.url)) site.append(el("span", "error", " (not encrypted)"));
    fields.replaceChildren(el("p", "", "It asks you to open this address:"), el("div", "el-url", q.url), site);
    $("el-accept").textContent = "Open";
  } else {
    $("el-warning").textContent = "Do not enter passwords, API keys or other secrets: servers may not ask for them in a form.";
    $("el-accept").textContent = "Submit";
    fields.replaceChildren(...(q.fields || []).map((f) => elicitField(f, read)));
  }
  const send = async (action) => {
    const body = { session: e.root, action };
    if (action === "accept" && q.mode !== "url") {
      body.content = {};
      for (const r of read) {
        const v = r();
        if (v !== undefined) body.content[v[0]] = v[1];
      }
    }
    try {
      await api("POST", `api/elicitations/${encodeURIComponent(q.id)}`, body);
    } catch (err) {
      // A refused answer: the request stays open with the reason.
      $("el-error").textContent = String(err.message || err).replace(/^409 (request for input \S+: )?/, "").replace(/ \(it is asked again\)\s*$/, "");
      return;
    }
    closeApproval(q.id);
    if (action === "accept" && q.mode === "url") window.open(q.url, "_blank", "noopener,noreferrer");
  };
  $("el-form").onsubmit = (ev) => { ev.preventDefault(); send("accept"); };
  $("el-decline").onclick = () => send("decline");
  $("el-cancel").onclick = () => send("cancel");
  dlg.oncancel = (ev) => { ev.preventDefault(); send("cancel"); };
  dlg.showModal();
}

// elicitField builds one field of a form and adds to read the function
// that reads its value back ([name, value], or undefined when empty).
function elicitField(f, read) {
  const box = el("div", "field");
  const label = el("label", "", (f.title || f.name) + (f.required ? " *" : ""));
  const help = [f.description, f.format, f.minimum !== undefined || f.maximum !== undefined ? `${f.minimum ?? ""}–${f.maximum ?? ""}` : ""]
    .filter(Boolean).join(" · ");
  if (help) label.append(el("small", "", help));
  box.append(label);
  const opts = f.options || [];
  if (f.type === "array") {
    const picks = el("div", "picks");
    const chosen = new Set(Array.isArray(f.default) ? f.default : []);
    const boxes = opts.map((o) => {
      const l = el("label");
      const c = el("input");
      c.type = "checkbox";
      c.checked = chosen.has(o.value);
      l.append(c, " " + (o.title || o.value));
      picks.append(l);
      return [c, o.value];
    });
    box.append(picks);
    read.push(() => {
      const vs = boxes.filter(([c]) => c.checked).map(([, v]) => v);
      return vs.length ? [f.name, vs] : undefined;
    });
  } else if (opts.length) {
    const s = el("select");
    if (!f.required) s.append(new Option("(none)", ""));
    for (const o of opts) s.append(new Option(o.title || o.value, o.value, false, o.value === f.default));
    box.append(s);
    read.push(() => (s.value === "" ? undefined : [f.name, s.value]));
  } else if (f.type === "boolean") {
    const c = el("input");
    c.type = "checkbox";
    c.checked = f.default === true;
    label.prepend(c, " ");
    read.push(() => [f.name, c.checked]);
  } else {
    const i = el("input");
    i.type = { email: "email", uri: "url", date: "date" }[f.format] || (f.type === "number" || f.type === "integer" ? "number" : "text");
    if (i.type === "number") i.step = f.type === "integer" ? "1" : "any";
    if (f.format === "date-time") i.placeholder = "YYYY-MM-DDThh:mm:ssZ";
    if (f.default !== undefined && f.default !== null) i.value = String(f.default);
    box.append(i);
    read.push(() => {
      const v = i.value.trim();
      if (v === "") return undefined;
      if (i.type === "number") return [f.name, Number(v)];
      return [f.name, v];
    });
  }
  return box;
}

function planRequest(e) {
  state.plan = e;
  $("plan-body").innerHTML = md.render(e.text || planMarkdown(e.plan));
  $("plan").showModal();
}

async function decidePlan(decision) {
  const e = state.plan;
  if (!e) return;
  state.plan = null;
  $("plan").close();
  await api("POST", `api/plans/${encodeURIComponent(e.plan_id)}`, { decision });
}

// ---- events ---------------------------------------------------------

// asked handles the events that put a question to a person or close
// one, whatever session they belong to (root "" is none: a trust
// question asked at start-up); true when e was one.
function asked(e) {
  switch (e.type) {
    case "approval_request": case "question": state.approvals.push(e); nextApproval(); return true;
    case "approval_resolved": closeApproval(e.approval.id); return true;
    case "question_resolved": closeApproval(e.question.id); return true;
    case "elicitation_request": elicitationRequest(e); return true;
    case "elicitation_resolved": closeApproval(e.elicitation.id); return true;
  }
  return false;
}

// serverNotice shows a notice or error of no session (an MCP server
// that came up or failed) in the side panel.
function serverNotice(e) {
  $("server-head").hidden = false;
  $("server-notices").append(el("li", e.type === "error" ? "error" : "notice", e.text || e.error || ""));
}

function handle(e) {
  if (asked(e)) return;
  if (!e.root) {
    if (e.type === "notice" || e.type === "error") serverNotice(e);
    return;
  }
  const s = sessionView(e.root);
  switch (e.type) {
    case "session_open": s.commands = e.commands || []; if (!state.current) show(s.id); break;
    case "turn_start": s.running = true; userTurn(s, e.text); status(); break;
    case "turn_done":
      s.running = false;
      s.answer = null;
      if (e.error) append(s, el("div", "error", `Error: ${e.error}`));
      else if (e.text) append(s, el("div", "notice", e.text));
      status();
      break;
    case "text_delta": textDelta(s, e); break;
    case "reasoning_delta": reasoning(s, e); break;
    case "tool_start": toolStart(s, e); break;
    case "tool_end": toolEnd(s, e); break;
    case "todo_update": todos(s, e); break;
    case "plan_ready": planBlock(s, e); break;
    case "plan_request": planRequest(e); break;
    case "plan_resolved": if (state.plan && state.plan.plan_id === e.plan_id) { state.plan = null; $("plan").close(); } break;
    case "goal_update": s.goal = e.goal ? `goal: ${e.goal.status} · turn ${e.goal.turns || 0}` : ""; status(); break;
    case "usage": usage(s, e.usage); break;
    case "notice": case "compaction": container(s, e).append(el("div", "notice", e.text)); break;
    case "error": container(s, e).append(el("div", "error", e.error)); break;
    case "history": history(s, e); break;
  }
}

function connect() {
  const src = new EventSource("api/events");
  src.onmessage = (m) => {
    try {
      handle(JSON.parse(m.data));
    } catch (err) {
      console.error(err);
    }
  };
  src.addEventListener("reset", () => location.reload());
}

// ---- composer -------------------------------------------------------

const menu = { items: [], sel: 0, kind: null, start: 0 };

function hideMenu() {
  menu.items = [];
  menu.kind = null;
  $("menu").hidden = true;
}

function drawMenu() {
  const ul = $("menu");
  ul.replaceChildren(...menu.items.map((it, i) => {
    const li = el("li", i === menu.sel ? "sel" : "", it.label);
    if (it.hint) li.append(el("small", "", it.hint));
    li.onmousedown = (ev) => { ev.preventDefault(); menu.sel = i; complete(); };
    return li;
  }));
  ul.hidden = menu.items.length === 0;
}

async function updateMenu() {
  const input = $("input");
  const upto = input.value.slice(0, input.selectionStart);
  const s = state.sessions.get(state.current);
  let m;
  if ((m = /^\/([\w:.-]*)$/.exec(upto))) {
    const builtin = [{ name: "plan", description: "plan read-only, approve, then run" }, { name: "goal", description: "keep working until the goal is done" }];
    const all = builtin.concat(s ? s.commands : []);
    menu.items = all.filter((c) => c.name.startsWith(m[1])).slice(0, 50)
      .map((c) => ({ label: "/" + c.name, hint: c.description || c.source || "", insert: "/" + c.name + " " }));
    menu.kind = "/";
    menu.start = 0;
  } else if ((m = /(^|\s)@([^\s@]*)$/.exec(upto))) {
    const path = m[2];
    const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/") + 1) : "";
    let list = [];
    try {
      list = await api("GET", `api/files?dir=${encodeURIComponent(dir)}`);
    } catch (err) { list = []; }
    menu.items = list.filter((p) => p.startsWith(path)).slice(0, 50).map((p) => ({ label: "@" + p, insert: "@" + p + (p.endsWith("/") ? "" : " ") }));
    menu.kind = "@";
    menu.start = upto.length - path.length - 1;
  } else {
    hideMenu();
    return;
  }
  menu.sel = 0;
  drawMenu();
}

function complete() {
  const it = menu.items[menu.sel];
  if (!it) return;
  const input = $("input");
  const end = input.selectionStart;
  input.value = input.value.slice(0, menu.start) + it.insert + input.value.slice(end);
  const pos = menu.start + it.insert.length;
  input.setSelectionRange(pos, pos);
  hideMenu();
  if (it.insert.endsWith("/")) updateMenu();
  input.focus();
}

async function send() {
  const input = $("input");
  const text = input.value.trim();
  if (!text || !state.current) return;
  input.value = "";
  hideMenu();
  state.follow = true;
  try {
    await api("POST", `api/sessions/${encodeURIComponent(state.current)}/prompt`, { text });
  } catch (err) {
    const s = state.sessions.get(state.current);
    append(s, el("div", "error", String(err.message || err)));
  }
}

function init() {
  $("new-session").onclick = () => newSession().catch(console.error);
  $("composer").onsubmit = (ev) => { ev.preventDefault(); send(); };
  $("stop").onclick = () => state.current && api("POST", `api/sessions/${encodeURIComponent(state.current)}/interrupt`);
  $("plan-approve").onclick = () => decidePlan("approve");
  $("plan-reject").onclick = () => decidePlan("reject");
  $("plan").addEventListener("cancel", (ev) => { ev.preventDefault(); decidePlan("reject"); });
  $("approval").addEventListener("cancel", (ev) => ev.preventDefault());
  $("below").onclick = () => { state.follow = true; scrollEnd(true); };
  $("transcripts").addEventListener("scroll", () => {
    state.follow = atEnd();
    if (state.follow) $("below").hidden = true;
  });
  const input = $("input");
  input.addEventListener("input", () => updateMenu());
  input.addEventListener("keydown", (ev) => {
    if (!$("menu").hidden && menu.items.length) {
      if (ev.key === "ArrowDown") { menu.sel = (menu.sel + 1) % menu.items.length; drawMenu(); ev.preventDefault(); return; }
      if (ev.key === "ArrowUp") { menu.sel = (menu.sel + menu.items.length - 1) % menu.items.length; drawMenu(); ev.preventDefault(); return; }
      if (ev.key === "Tab" || ev.key === "Enter") { complete(); ev.preventDefault(); return; }
      if (ev.key === "Escape") { hideMenu(); ev.preventDefault(); return; }
    }
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); send(); }
    if (ev.key === "Escape") {
      const s = state.sessions.get(state.current);
      if (s && s.running) api("POST", `api/sessions/${encodeURIComponent(s.id)}/interrupt`);
    }
  });
  loadSaved().catch(console.error);
  connect();
}

init();
