// kubesched ui: the page over the JSON API of /api/v1 (see docs/ui.md). Plain DOM, no build step.
"use strict";

const state = {
  tab: "cluster", info: null, run: null,           // run: selected run id, null = live cluster / latest
  node: null, report: null,                        // the node view (#/node/NAME), the report view's id
  pods: { offset: 0, limit: 100 }, nodes: { offset: 0, limit: 50 },
  why: { pod: null, attempt: null, sort: "default", desc: false, offset: 0, limit: 100, reason: null },
  generation: -1,
};

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}
const $ = (sel) => document.querySelector(sel);

async function api(path, opts) {
  const init = Object.assign({ headers: {} }, opts || {});
  if (init.body !== undefined) {
    init.method = init.method || "POST";
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(init.body);
  }
  const resp = await fetch("/api/v1" + path, init);
  const data = await resp.json().catch(() => ({ error: `HTTP ${resp.status}` }));
  if (!resp.ok) throw new Error(data.error || `HTTP ${resp.status}`);
  return data;
}

function qs(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== "") p.set(k, v);
  const s = p.toString();
  return s ? "?" + s : "";
}
function runParam() { return state.run === null ? {} : { run: state.run }; }
function showError(node, err) { node.hidden = !err; node.textContent = err ? String(err.message || err) : ""; }

// ---- units -------------------------------------------------------------------------------------
function fmtQty(res, v) {
  if (v === null || v === undefined) return "";
  if (res === "cpu") return v % 1000 === 0 ? `${v / 1000}` : `${v}m`;
  if (res === "memory" || res === "ephemeral-storage" || res.startsWith("hugepages-")) {
    const units = [["Ti", 2 ** 40], ["Gi", 2 ** 30], ["Mi", 2 ** 20], ["Ki", 2 ** 10]];
    for (const [u, f] of units) if (v >= f) return `${+(v / f).toFixed(1)}${u}`;
    return `${v}`;
  }
  return `${v}`;
}
function fmtBytes(v) { return v >= 1e9 ? `${(v / 1e9).toFixed(2)} GB` : `${(v / 1e6).toFixed(0)} MB`; }
function statusBadge(s) { return el("span", { class: `status ${s}`, text: s }); }

// ---- URLs: every view has one, so it can be linked and reloaded ---------------------------------
// #/cluster, #/node/NAME, #/pod/NAMESPACE/NAME (?attempt=N), #/whatif, #/reports[/ID]; ?run=N on any
// of them selects a run.
function viewHash() {
  const q = {};
  if (state.run !== null && state.tab !== "reports") q.run = state.run;  // reports do not depend on a run
  let path;
  if (state.tab === "why") {
    path = state.why.pod ? `pod/${state.why.pod.split("/").map(encodeURIComponent).join("/")}` : "pod";
    if (state.why.attempt) q.attempt = state.why.attempt;
  } else if (state.tab === "cluster" && state.node) path = `node/${encodeURIComponent(state.node)}`;
  else if (state.tab === "reports" && state.report) path = `reports/${encodeURIComponent(state.report)}`;
  else path = state.tab;
  return `#/${path}${qs(q)}`;
}

function navigate() {
  const h = viewHash();
  if (location.hash !== h) history.pushState(null, "", h);
}

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, query] = raw.split("?");
  const parts = (path || "").split("/").filter((x) => x !== "").map(decodeURIComponent);
  const q = new URLSearchParams(query || "");
  const run = q.get("run");
  state.run = run === null || run === "" ? null : Number(run);
  state.node = null;
  const view = parts[0] || "cluster";
  if (view === "pod" || view === "why") {
    const key = parts.length >= 3 ? `${parts[1]}/${parts[2]}` : (state.why.pod || null);
    const attempt = q.get("attempt") ? Number(q.get("attempt")) : null;
    if (key !== state.why.pod || attempt !== state.why.attempt) {
      state.why = Object.assign(state.why, { pod: key, attempt, sort: "default", desc: false, offset: 0, reason: null });
    }
    $("#why-form input[name=pod]").value = key || "";
    return "why";
  }
  if (view === "node" && parts[1]) { state.node = parts[1]; return "cluster"; }
  if (view === "reports") { state.report = parts[1] || null; return "reports"; }
  return ["cluster", "whatif"].includes(view) ? view : "cluster";
}

function showTab(name) {
  state.tab = name;
  for (const b of document.querySelectorAll("#tabs button")) b.setAttribute("aria-selected", b.dataset.tab === name);
  for (const s of document.querySelectorAll("section.tab")) s.hidden = s.id !== `tab-${name}`;
}

async function route() {
  const tab = parseHash();
  showTab(tab);
  if (state.info) syncRunSelect();
  if (tab === "cluster") {
    $("#node-filters input[name=q]").value = state.node || "";
    $("#pod-filters input[name=node]").value = state.node || "";
    state.pods.offset = 0; state.nodes.offset = 0;
  }
  if (tab === "reports") await loadStoredReport();
  await refresh();
}

function selectTab(name) {
  state.tab = name;
  if (name === "cluster") state.node = null;
  navigate();
  route();
}

// ---- header, tabs, runs ------------------------------------------------------------------------
function syncRunSelect() {
  const info = state.info, sel = $("#run-select");
  if (info.mode === "snapshot" && state.run !== null && !info.runs.some((r) => r.id === state.run)) state.run = null;
  sel.value = state.run === null ? (info.mode === "live" ? "" : String(info.runs.length)) : String(state.run);
}

async function loadInfo() {
  const info = await api("/info");
  state.info = info;
  $("#mode").textContent = info.mode === "live" ? "live cluster" : `snapshot: ${info.sources.join(", ")}`;
  $("#live-dot").hidden = info.mode !== "live";
  $("#fresh-label").hidden = info.mode !== "live";
  const sel = $("#run-select");
  const current = sel.value;
  sel.replaceChildren();
  if (info.mode === "live") sel.append(el("option", { value: "", text: "live cluster" }));
  for (const r of info.runs.slice().reverse()) {
    sel.append(el("option", { value: String(r.id), text: `run ${r.id}${r.id === info.runs.length ? " (latest)" : ""}` }));
  }
  syncRunSelect();
  if (!sel.value && current) sel.value = current;
}

// ---- cluster view ------------------------------------------------------------------------------
async function loadPods() {
  const f = new FormData($("#pod-filters"));
  const params = Object.assign(runParam(), Object.fromEntries(f.entries()), { offset: state.pods.offset, limit: state.pods.limit });
  let data;
  try { data = await api("/pods" + qs(params)); showError($("#pod-error"), null); }
  catch (e) { showError($("#pod-error"), e); return; }
  fillSelect($("#pod-filters select[name=namespace]"), data.namespaces);
  fillSelect($("#pod-filters select[name=status]"), Object.keys(data.counts));
  const chips = $("#status-chips");
  chips.replaceChildren(...Object.entries(data.counts).map(([s, n]) =>
    el("button", { type: "button", onclick: () => { $("#pod-filters select[name=status]").value = s; state.pods.offset = 0; loadPods(); } },
      statusBadge(s), ` ${n}`)));
  const tb = $("#pods-table tbody");
  tb.replaceChildren(...data.rows.map((p) => el("tr", { "data-pod": p.key },
    el("td", {}, p.key), el("td", {}, statusBadge(p.status)),
    el("td", {}, p.node ? nodeLink(p.node) : (p.nominatedNode ? `(nominated ${p.nominatedNode})` : "")),
    el("td", { class: "num" }, p.attempts || ""), el("td", { class: "msg" }, p.message),
    el("td", {}, whyButton(p)))));
  pager($("#pods-pager"), data, state.pods, loadPods);
  const dl = $("#pending-pods");
  dl.replaceChildren(...data.rows.filter((p) => p.status !== "Running" && p.status !== "Bound").map((p) => el("option", { value: p.key })));
}

function whyButton(p) {
  // a simulated pod with attempts, or in the live view any pod not bound yet
  const live = state.info && state.info.mode === "live" && state.run === null;
  if (!(p.attempts > 0 || (live && !p.node))) return null;
  return el("button", { type: "button", class: "link", onclick: () => openWhy(p.key) }, "why?");
}

function nodeLink(name) {
  return el("a", { href: `#/node/${encodeURIComponent(name)}`, class: "node-link" }, name);
}

function fillSelect(sel, values) {
  const cur = sel.value;
  const keep = sel.options[0];
  sel.replaceChildren(keep, ...values.map((v) => el("option", { value: v, text: v })));
  sel.value = values.includes(cur) ? cur : "";
}

function pager(node, data, st, reload) {
  const from = data.total ? data.offset + 1 : 0, to = Math.min(data.offset + data.limit, data.total);
  node.replaceChildren(
    el("button", { type: "button", disabled: data.offset <= 0, onclick: () => { st.offset = Math.max(0, st.offset - st.limit); reload(); } }, "‹ prev"),
    `${from}–${to} of ${data.total}`,
    el("button", { type: "button", disabled: to >= data.total, onclick: () => { st.offset += st.limit; reload(); } }, "next ›"));
}

async function loadNodes() {
  const f = new FormData($("#node-filters"));
  const params = Object.assign(runParam(), Object.fromEntries(f.entries()), { offset: state.nodes.offset, limit: state.nodes.limit });
  const data = await api("/nodes" + qs(params));
  fillSelect($("#node-filters select[name=zone]"), data.zones.filter((z) => z));
  const sortSel = $("#node-filters select[name=sort]");
  const cur = sortSel.value;
  sortSel.replaceChildren(el("option", { value: "name", text: "name" }),
    ...["pods", ...data.resources].map((r) => el("option", { value: `alloc:${r}`, text: `most allocated ${r}` })));
  sortSel.value = cur || "name";
  const tb = $("#nodes-table tbody");
  tb.replaceChildren(...data.rows.map((n) => el("tr", { "data-node": n.name },
    el("td", {}, nodeLink(n.name), n.unschedulable ? el("div", { class: "taint", text: "unschedulable" }) : null,
      n.error ? el("div", { class: "error", text: n.error }) : null),
    el("td", {}, n.zone),
    el("td", {}, n.taints.map((t) => el("span", { class: "taint", text: t }))),
    el("td", {}, bars(n)),
    el("td", { class: "images" }, images(n)))));
  pager($("#nodes-pager"), data, state.nodes, loadNodes);
}

function bars(n) {
  const rows = [];
  const add = (name, used, alloc, fmt) => {
    const pct = alloc ? Math.min(100, (100 * used) / alloc) : (used ? 100 : 0);
    rows.push(el("span", { text: name }), el("span", { text: `${fmt(used)} / ${fmt(alloc)} (${pct.toFixed(0)}%)` }),
      el("div", { class: "bar" + (pct >= 100 ? " full" : ""), title: `${name}: ${pct.toFixed(1)}%` }, el("span", { style: `width:${pct}%` })));
  };
  for (const [res, v] of Object.entries(n.resources)) add(res, v.requested, v.allocatable, (x) => fmtQty(res, x));
  add("pods", n.pods.count, n.pods.allocatable, (x) => String(x));
  return el("div", { class: "bars" }, rows);
}

function images(n) {
  if (!n.imageCount) return "";
  const total = n.images.reduce((a, im) => a + im.sizeBytes, 0);
  const names = n.images.map((im) => (im.names.find((x) => !x.includes("@")) || im.names[0] || "")).join("\n");
  return el("details", {}, el("summary", {}, `${n.imageCount} image(s), ${fmtBytes(total)}`), el("pre", { text: names }));
}

// ---- why this pod ------------------------------------------------------------------------------
function openWhy(key) {
  state.why = Object.assign(state.why, { pod: key, attempt: null, sort: "default", desc: false, offset: 0, reason: null });
  $("#why-form input[name=pod]").value = key;
  selectTab("why");
}

function setAttempt(attempt) {
  state.why.attempt = attempt; state.why.offset = 0;
  navigate();
  loadWhy();
}

async function loadWhy() {
  const key = state.why.pod;
  if (!key) return;
  const [ns, name] = key.split("/");
  const base = `/pods/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
  let pod;
  try { pod = await api(base + qs(runParam())); showError($("#why-error"), null); }
  catch (e) { showError($("#why-error"), e); clearWhy(); return; }
  $("#why-pod").replaceChildren(el("div", { class: "pod-head" }, el("strong", {}, pod.key), " ", statusBadge(pod.status),
    pod.node ? ` on ${pod.node}` : "", pod.message ? el("div", { class: "msg", text: pod.message }) : null));
  $("#why-history tbody").replaceChildren(...pod.history.map((a) => el("tr", {},
    el("td", {}, a.attempt), el("td", {}, a.time), el("td", {}, a.result || ""), el("td", {}, a.node || ""),
    el("td", { class: "msg" }, a.message))));
  const attSel = $("#why-form select[name=attempt]");
  attSel.replaceChildren(...pod.history.map((a) => el("option", { value: a.attempt, text: `${a.attempt}` })));
  if (pod.history.length) attSel.value = state.why.attempt || pod.history[pod.history.length - 1].attempt;
  const p = Object.assign(runParam(), { attempt: state.why.attempt });
  let ex;
  try { ex = await api(base + "/explain" + qs(p)); }
  catch (e) { showError($("#why-error"), e); clearWhy(true); return; }
  state.why.explanation = ex;
  const s = ex.summary;
  const reasons = el("ul", { class: "reasons" }, s.reasons.map((r) => el("li", {},
    el("button", { type: "button", class: "link", onclick: () => { state.why.reason = r.reason; state.why.offset = 0; loadWhyNodes(); } },
      `${r.nodes} node(s)`), ` ${r.plugin}: ${r.reason}`)));
  $("#why-summary").replaceChildren(...[
    el("h3", {}, `Attempt ${ex.attempt || "now"}: ${ex.selectedNode ? "selected " + ex.selectedNode : ex.result || "not scheduled"}`),
    el("div", { class: "summary-line" }, `${s.evaluated} node(s) evaluated of ${ex.nodes}, ${s.feasible} feasible` +
      (s.notEvaluated ? `, ${s.notEvaluated} not evaluated (percentageOfNodesToScore)` : "") +
      (ex.reproduced === false ? " — warning: the re-run did not reproduce the recorded outcome" : "")),
    s.reasons.length ? reasons : null,
    el("div", { class: "note" }, "Rows: the chosen node first, then by total score, then in the order the scheduler evaluated the nodes; click a column to sort."),
  ].filter((c) => c !== null));  // replaceChildren would print a null as the text "null"
  $("#why-stages pre").textContent = JSON.stringify({ preFilter: ex.preFilter, postFilter: ex.postFilter, preScore: ex.preScore,
    reserve: ex.reserve, permit: ex.permit, preBind: ex.preBind, bind: ex.bind }, null, 2);
  await loadWhyNodes();
}

function clearWhy(keepPod) {
  if (!keepPod) { $("#why-pod").replaceChildren(); $("#why-history tbody").replaceChildren(); }
  $("#why-summary").replaceChildren(); $("#why-table thead").replaceChildren(); $("#why-table tbody").replaceChildren();
  $("#why-pager").replaceChildren();
}

async function loadWhyNodes() {
  const ex = state.why.explanation;
  if (!ex) return;
  const [ns, name] = ex.pod.split("/");
  const f = new FormData($("#why-filters"));
  const p = Object.assign(runParam(), { attempt: state.why.attempt, sort: state.why.sort, desc: state.why.desc ? 1 : "",
    offset: state.why.offset, limit: state.why.limit, reason: state.why.reason, node: f.get("node"), feasible: f.get("feasible") ? "true" : "" });
  const data = await api(`/pods/${encodeURIComponent(ns)}/${encodeURIComponent(name)}/explain/nodes` + qs(p));
  $("#why-reason-filter").replaceChildren(state.why.reason ? el("span", {}, `reason: ${state.why.reason} `,
    el("button", { type: "button", onclick: () => { state.why.reason = null; state.why.offset = 0; loadWhyNodes(); } }, "×")) : "");
  const th = (label, key, cls) => el("th", { class: "sortable" + (state.why.sort === key ? " sorted" + (state.why.desc ? "" : " asc") : "") + (cls ? " " + cls : ""),
    "data-sort": key, onclick: () => { if (state.why.sort === key) state.why.desc = !state.why.desc; else { state.why.sort = key; state.why.desc = key !== "node" && key !== "verdict"; } state.why.offset = 0; loadWhyNodes(); } }, label);
  $("#why-table thead").replaceChildren(el("tr", {}, th("node", "node"), th("total", "total"), th("verdict", "verdict"),
    ...ex.filterPlugins.map((pl) => th(pl, `filter:${pl}`, "filter-col")),
    ...ex.scorePlugins.map((pl) => th(el("span", {}, pl, el("br"), el("small", {}, "raw / norm / weighted")), `score:${pl}`))));
  $("#why-table tbody").replaceChildren(...data.rows.map((r) => el("tr", { class: r.selected ? "selected" : null, "data-node": r.node },
    el("td", {}, r.node + (r.selected ? " ★" : "")),
    el("td", { class: "num" }, r.total ?? ""),
    el("td", { class: "reason " + (r.feasible ? "ok-cell" : "bad-cell") }, r.feasible ? "feasible" : `${r.failedPlugin}: ${r.reason}`),
    ...ex.filterPlugins.map((pl) => {
      const v = r.filter[pl];
      if (v === undefined) return el("td", { title: "not run (an earlier Filter plugin rejected the node)" }, "");
      return v === "Success" ? el("td", { class: "ok-cell", title: "Success" }, "✓") : el("td", { class: "bad-cell", title: v }, "✗ " + v.split(":")[0]);
    }),
    ...ex.scorePlugins.map((pl) => { const v = r.scores[pl]; return el("td", { class: "num" }, v ? `${v[0]} / ${v[1] ?? ""} / ${v[2] ?? ""}` : ""); }))));
  pager($("#why-pager"), data, state.why, loadWhyNodes);
}

// ---- what if -----------------------------------------------------------------------------------
async function loadConfig(force) {
  const ta = $("#config-text");
  const c = await api("/config" + qs(runParam()));
  if (force || !ta.value) ta.value = c.editor;
  $("#config-source").textContent = `(${c.source})`;
  $("#effective-config").textContent = c.effective || "";
  const rows = [];
  for (const [profile, plugins] of Object.entries(c.scoreWeights || {})) {
    for (const [plugin, w] of Object.entries(plugins)) {
      rows.push(el("tr", {}, el("td", {}, profile), el("td", {}, plugin),
        el("td", {}, el("input", { type: "number", min: "1", step: "1", value: String(w), "data-profile": profile,
          "data-plugin": plugin, "data-weight": String(w), "aria-label": `${plugin} weight` }))));
    }
  }
  $("#weights-table tbody").replaceChildren(...rows);
  $("#weights").hidden = rows.length === 0;
}

async function writeWeights() {
  showError($("#whatif-error"), null); $("#whatif-ok").hidden = true;
  const weights = {};
  for (const inp of document.querySelectorAll("#weights-table input")) {
    if (inp.value === inp.dataset.weight) continue;
    const w = Number(inp.value);
    if (!Number.isInteger(w) || w < 1) { showError($("#whatif-error"), new Error(`${inp.dataset.plugin}: weight must be a positive integer`)); return; }
    (weights[inp.dataset.profile] = weights[inp.dataset.profile] || {})[inp.dataset.plugin] = w;
  }
  if (!Object.keys(weights).length) { $("#whatif-ok").hidden = false; $("#whatif-ok").textContent = "no weight changed"; return; }
  try {
    const r = await api("/config/weights", { body: { config: $("#config-text").value, weights } });
    $("#config-text").value = r.config;
    $("#whatif-ok").hidden = false; $("#whatif-ok").textContent = "weights written into the YAML: re-run to see what moves";
  } catch (e) { showError($("#whatif-error"), e); }
}

async function loadRuns() {
  const data = await api("/runs");
  $("#runs-table tbody").replaceChildren(...data.runs.slice().reverse().map((r) => el("tr", {},
    el("td", {}, `run ${r.id}`), el("td", { class: "num" }, r.pods),
    el("td", {}, Object.entries(r.counts).map(([s, n]) => el("span", {}, statusBadge(s), ` ${n} `))),
    el("td", { class: "num" }, r.attempts), el("td", { class: "num" }, r.wallSeconds))));
}

async function validate() {
  showError($("#whatif-error"), null); $("#whatif-ok").hidden = true;
  try {
    await api("/config/validate", { body: { config: $("#config-text").value, added: $("#added-text").value } });
    $("#whatif-ok").hidden = false; $("#whatif-ok").textContent = "valid";
  } catch (e) { showError($("#whatif-error"), e); }
}

async function rerun() {
  showError($("#whatif-error"), null); $("#whatif-ok").hidden = true;
  $("#whatif-busy").hidden = false; $("#rerun-btn").disabled = true;
  try {
    const body = { config: $("#config-text").value, added: $("#added-text").value };
    if ($("#fresh-snapshot").checked) body.freshSnapshot = true;
    const r = await api("/runs", { body });
    $("#fresh-snapshot").checked = false;
    state.run = null;
    await loadInfo();
    if (state.info.mode === "live") { state.run = r.id; $("#run-select").value = String(r.id); }
    renderDiff(r.diff, r.id);
    await loadRuns();
    await loadConfig(false);
  } catch (e) { showError($("#whatif-error"), e); }
  finally { $("#whatif-busy").hidden = true; $("#rerun-btn").disabled = false; }
}

function renderDiff(d, id) {
  const box = $("#diff");
  if (!d) { box.replaceChildren(el("p", { class: "note" }, `run ${id}: first run, nothing to compare with`)); return; }
  const c = d.counts;
  const side = (s) => s ? el("td", {}, `${s.status}${s.node ? " on " + s.node : ""}`,
    s.message ? el("div", { class: "msg", text: s.message }) : null) : el("td", {}, "—");
  box.replaceChildren(
    el("h3", {}, `Placement diff: run ${d.after} against run ${d.before}`),
    el("div", { class: "summary-line", id: "diff-counts" },
      `${c.moved} moved, ${c.newlyScheduled} newly scheduled, ${c.newlyPending} newly pending, ${c.statusChanged} status changed, ` +
      `${c.messageChanged} pending reason changed, ${c.added} added, ${c.removed} removed, ${c.unchanged} unchanged`),
    el("table", { class: "grid", id: "diff-table" }, el("thead", {}, el("tr", {}, el("th", {}, "pod"), el("th", {}, "change"),
      el("th", {}, `run ${d.before}`), el("th", {}, `run ${d.after}`))),
    el("tbody", {}, d.changes.map((ch) => el("tr", { class: `change-${ch.change}`, "data-pod": ch.pod },
      el("td", {}, el("button", { type: "button", class: "link", onclick: () => openWhy(ch.pod) }, ch.pod)), el("td", {}, ch.change),
      side(ch.before), side(ch.after))))));
}

// ---- replay reports ----------------------------------------------------------------------------
let plotlyLoading = null;
function loadPlotly() {
  if (window.Plotly) return Promise.resolve();
  if (!plotlyLoading) plotlyLoading = new Promise((ok, fail) => {
    document.head.append(el("script", { src: "/static/plotly.min.js", onload: ok, onerror: () => fail(new Error("plotly.js failed to load")) }));
  });
  return plotlyLoading;
}

async function openReports(files) {
  showError($("#report-error"), null);
  try {
    const reports = [];
    for (const f of files) {
      let doc;
      try { doc = JSON.parse(await f.text()); } catch (e) { throw new Error(`${f.name}: not JSON: ${e.message}`); }
      reports.push({ name: f.name, report: doc });
    }
    const view = await api("/reports", { body: { reports } });
    state.report = view.id;
    navigate();
    await renderReport(view);
  } catch (e) { showError($("#report-error"), e); }
}

async function loadStoredReport() {
  showError($("#report-error"), null);
  if (!state.report) return;
  try { await renderReport(await api(`/reports/${encodeURIComponent(state.report)}`)); }
  catch (e) { showError($("#report-error"), e); }
}

async function renderReport(view) {
  $("#report-table thead").replaceChildren(el("tr", {}, view.columns.map((c) => el("th", {}, c))));
  $("#report-table tbody").replaceChildren(...view.rows.map((r) => el("tr", {}, el("td", {}, r.config),
    r.cells.map((v) => el("td", { class: "num" }, v === null || v === undefined ? "-" : typeof v === "number" && !Number.isInteger(v) ? v.toFixed(3) : v)))));
  const notes = [];
  if (view.withoutPlots.length) notes.push(`no plot data in: ${view.withoutPlots.join(", ")}`);
  if (view.note) notes.push(`no plots: ${view.note}`);
  $("#report-note").textContent = notes.join("; ");
  const box = $("#report-plots");
  box.replaceChildren();
  if (view.figures.length) await loadPlotly();
  for (const fig of view.figures) {
    const div = el("div", { class: "plot" });
    box.append(div);
    window.Plotly.newPlot(div, fig.data, fig.layout, { responsive: true, displaylogo: false });
  }
}

// ---- refresh & live ----------------------------------------------------------------------------
// One refresh at a time; a refresh asked for while one runs (a tab switched, an Explain clicked)
// runs once more after it, for the view current then: it is never dropped.
let refreshing = null, refreshAgain = false;
async function refresh() {
  if (refreshing) { refreshAgain = true; return refreshing; }
  refreshing = (async () => {
    do {
      refreshAgain = false;
      try {
        if (state.tab === "cluster") await Promise.all([loadPods(), loadNodes()]);
        else if (state.tab === "why") await loadWhy();
        else if (state.tab === "whatif") await Promise.all([loadConfig(false), loadRuns()]);
      } catch (e) { console.error(e); }
    } while (refreshAgain);
    refreshing = null;
  })();
  return refreshing;
}

function watch() {
  const es = new EventSource("/api/v1/watch");
  es.onmessage = async (m) => {
    const g = JSON.parse(m.data).generation;
    if (state.generation >= 0 && g !== state.generation) {
      await loadInfo();
      if (state.tab !== "whatif") refresh();
    }
    state.generation = g;
  };
}

function debounce(fn, ms) { let t; return (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), ms); }; }

document.addEventListener("DOMContentLoaded", async () => {
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => selectTab(b.dataset.tab));
  $("#run-select").addEventListener("change", (e) => { state.run = e.target.value === "" ? null : Number(e.target.value); state.pods.offset = 0; state.nodes.offset = 0; navigate(); refresh(); });
  const podReload = debounce(() => { state.pods.offset = 0; loadPods(); }, 250);
  $("#pod-filters").addEventListener("input", podReload);
  $("#pod-filters").addEventListener("submit", (e) => { e.preventDefault(); podReload(); });
  const nodeReload = debounce(() => { state.nodes.offset = 0; loadNodes(); }, 250);
  $("#node-filters").addEventListener("input", nodeReload);
  $("#node-filters").addEventListener("submit", (e) => { e.preventDefault(); nodeReload(); });
  $("#why-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const pod = new FormData(e.target).get("pod").trim();
    if (pod !== state.why.pod) openWhy(pod); else setAttempt(Number($("#why-form select[name=attempt]").value) || null);
  });
  $("#why-form select[name=attempt]").addEventListener("change", (e) => setAttempt(Number(e.target.value)));
  const whyReload = debounce(() => { state.why.offset = 0; loadWhyNodes(); }, 250);
  $("#why-filters").addEventListener("input", whyReload);
  $("#why-filters").addEventListener("submit", (e) => e.preventDefault());
  $("#validate-btn").addEventListener("click", validate);
  $("#weights-btn").addEventListener("click", writeWeights);
  $("#rerun-btn").addEventListener("click", rerun);
  $("#report-files").addEventListener("change", (e) => openReports([...e.target.files]));
  // links fire hashchange; back and forward to an entry of pushState fire popstate only
  let routed = null;
  const onUrl = () => { if (routed !== location.hash) { routed = location.hash; route(); } };
  window.addEventListener("hashchange", onUrl);
  window.addEventListener("popstate", onUrl);
  await loadInfo();
  await route();
  document.body.dataset.ready = "1";
  watch();
});
