// topofit web view logic: every 2 s, the overview (overview.js: the cluster by network domain, a tile per
// node) and the rows of the nodes in scope: a domain's (GET /api/v1/ui/nodes?domain=PATH, at most
// kRowsAtOnce of them), one node's (GET /api/v1/nodes/NAME), or every node's when the cluster draws no
// domain and has at most kRowsAtOnce nodes. A row is a node's GPUs, grouped into NVLink islands (greedy:
// each GPU joins the first group whose every member it has an NV* link to), each GPU showing its holder
// or "free"; the filter keeps the rows matching name, label (key=value), profile, topology source, pod,
// free>=N and nvlink>=N; a clicked row shows its link matrix and pods; a pasted pod goes to
// POST /api/v1/explain, rendering per-node verdicts. ?explain=<pod> runs explain on load, ?node=<name>
// selects a node, ?domain=<path> opens a domain, ?rows=<n> draws up to n rows at once (kRowsAtOnce when
// absent). Plain DOM APIs only; every string from the server goes in as text.
"use strict";

// Rows drawn at once: the largest power of two whose rows headless Chromium draws within 1 s of a click
// (half the overview's 2 s target) at the bench's median (docs/ui.md: the procedure and the figures); a
// bigger domain draws its first ones.
const kRowsAtOnce = 128;

// scope: null (no rows), { domain: path } ("" = every node) or { node: name }; undefined until the
// first overview says which applies.
const state = { nodes: [], total: 0, selected: null, filter: "", scope: undefined, urlDomain: null, busy: false,
                rowsAtOnce: kRowsAtOnce };

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// A stable colour per pod name.
function podColour(name) {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return `hsl(${h % 360}, 55%, 42%)`;
}

const isNv = (link) => typeof link === "string" && link.startsWith("NV");

// On a node that shares its GPUs (time-slicing, MPS, MIG): the devices of each physical GPU, by GPU.
function physicalGroups(node) {
  const groups = [];
  (node.gpuStates || []).forEach((s, d) => (groups[s.gpu] = groups[s.gpu] || []).push(d));
  return groups.filter(Boolean);
}

// Groups of GPUs whose every pair is NVLink-connected; GPUs with no NVLink stay alone.
function islands(node) {
  const n = node.gpus || 0;
  const m = node.linkMatrix || [];
  const groups = [];
  for (let g = 0; g < n; g++) {
    const home = groups.find((grp) => grp.every((o) => m[g] && isNv(m[g][o])));
    if (home) home.push(g);
    else groups.push([g]);
  }
  return groups;
}

function largestFreeSet(node) {
  let best = 0;
  for (const [size, count] of Object.entries(node.freeNvlinkSets || {}))
    if (count > 0) best = Math.max(best, Number(size));
  return best;
}

// Every space-separated term must match: free OP N, nvlink OP N, or a substring of the node's text.
function matches(node, filter) {
  const terms = filter.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const labels = Object.entries(node.labels || {}).map(([k, v]) => `${k}=${v}`);
  const text = [node.name, node.profile, node.topologySource, ...labels, ...(node.gpuHolders || []),
                ...(node.warnings || [])].join(" ").toLowerCase();
  return terms.every((t) => {
    const cmp = /^(free|nvlink)\s*(>=|<=|>|<|=)\s*(\d+)$/.exec(t);
    if (!cmp) return text.includes(t);
    const have = cmp[1] === "free" ? node.free : largestFreeSet(node);
    const want = Number(cmp[3]);
    switch (cmp[2]) {
      case ">=": return have >= want;
      case "<=": return have <= want;
      case ">": return have > want;
      case "<": return have < want;
      default: return have === want;
    }
  });
}

function gpuCell(node, g) {
  const holder = (node.gpuHolders || [])[g] || "";
  const free = (node.freeGpus || []).includes(g);
  const cls = holder ? "gpu held" : free ? "gpu free" : "gpu unusable";
  const device = node.sharing ? ((node.gpuStates || [])[g] || {}).device || `device ${g}` : "";
  const cell = el("div", { class: cls, "data-gpu": g, "data-holder": holder, title: holder || (free ? "free" : "unavailable") },
                  el("span", { class: "idx" }, device || `GPU ${g}`),
                  el("span", { class: "who" }, holder || (free ? "free" : "unavailable")));
  if (holder) cell.style.background = podColour(holder);
  return cell;
}

function nodeRow(node) {
  const shapes = el("span", { class: "shapes" });
  for (const [size, count] of Object.entries(node.freeNvlinkSets || {}))
    shapes.append(el("span", { "data-shape": size, "data-count": count }, `${size}-sets: ${count}`));
  const groups = el("div", { class: "islands" });
  if (node.sharing) {
    // One box per physical GPU holding its replicas or MIG devices (docs/shared-gpus.md).
    for (const grp of physicalGroups(node)) {
      const g = node.gpuStates[grp[0]].gpu;
      const box = el("div", { class: "island physical", "data-physical-gpu": g, "data-devices": grp.join(",") },
                     el("div", { class: "physical-head" }, `GPU ${g}`));
      for (const d of grp) box.append(gpuCell(node, d));
      groups.append(box);
    }
  } else {
    for (const grp of islands(node)) {
      const box = el("div", { class: grp.length > 1 ? "island nvlink" : "island", "data-island": grp.join(",") });
      for (const g of grp) box.append(gpuCell(node, g));
      groups.append(box);
    }
  }
  const sharing = node.sharing
    ? el("span", { class: "sharing", "data-sharing": node.sharing.mode },
         `${node.sharing.mode}${node.sharing.migProfile ? " " + node.sharing.migProfile : ""}: ` +
         `${node.sharing.physicalGpus} GPUs x ${node.sharing.devicesPerGpu}, ` +
         `${node.sharing.wholeFreeGpus.length} whole free`)
    : null;
  const row = el("div", { class: node.name === state.selected ? "node selected" : "node", "data-node": node.name,
                          onclick: () => select(node.name) },
    el("div", { class: "node-head" },
      el("span", { class: "node-name" }, node.name),
      el("span", { class: "muted" }, `${node.profile || "-"} · ${node.topologySource}`),
      el("span", { class: "free-count" }, `${node.free}/${node.gpus} free`),
      sharing,
      shapes,
      (node.warnings || []).length ? el("span", { class: "warn" }, `${node.warnings.length} warning(s)`) : null),
    node.gpus ? groups : el("span", { class: "muted" }, "no GPUs"));
  return row;
}

function renderNodes() {
  renderScope();
  const box = document.getElementById("nodes");
  const shown = state.nodes.filter((n) => matches(n, state.filter));
  box.replaceChildren(...shown.map(nodeRow));
  if (!shown.length && state.scope) box.append(el("p", { class: "muted" }, "No node matches the filter."));
  renderDetail();
}

// The line above the rows: what they are, and how to leave them.
function renderScope() {
  const line = document.getElementById("scope");
  const scope = state.scope;
  for (const open of document.querySelectorAll("#overview .domain.open")) open.classList.remove("open");
  if (!scope) {
    line.replaceChildren(el("span", { class: "muted" }, "Click a domain for its nodes, or a node's tile."));
    return;
  }
  let what = `node ${scope.node}`;
  if (scope.domain === "") what = `all ${state.total} nodes`;
  else if (scope.domain !== undefined) {
    const d = domainOfPath(scope.domain);
    what = `${d ? d.label : scope.domain}: ${state.total} node${state.total === 1 ? "" : "s"}`;
    const box = document.querySelector(`#overview .domain[data-domain="${CSS.escape(scope.domain)}"]`);
    if (box) box.classList.add("open");
  }
  const more = state.nodes.length < state.total ? ` (the first ${state.nodes.length}; open a smaller domain for the rest)` : "";
  line.replaceChildren(el("b", { id: "scope-name" }, what), more,
                       el("button", { type: "button", id: "scope-close", onclick: () => setScope(null) }, "close"));
}

function renderDetail() {
  const box = document.getElementById("detail");
  const node = state.nodes.find((n) => n.name === state.selected);
  if (!node) return;
  const parts = [el("h2", {}, node.name)];
  const m = node.linkMatrix || [];
  if (m.length) {
    const head = el("tr", {}, el("th", {}, ""));
    m.forEach((_, b) => head.append(el("th", {}, `GPU${b}`)));
    const table = el("table", { id: "link-matrix" }, head);
    m.forEach((row, a) => {
      const tr = el("tr", {}, el("th", {}, `GPU${a}`));
      row.forEach((link, b) => {
        const bw = node.bandwidthGBps ? node.bandwidthGBps[a][b] : null;
        tr.append(el("td", { class: `link-${isNv(link) ? "NV" : link}`, title: bw !== null ? `${bw} GB/s` : "" }, link));
      });
      table.append(tr);
    });
    parts.push(table);
  }
  const pods = el("table", { id: "node-pods" }, el("tr", {}, el("th", {}, "pod"), el("th", {}, "GPUs"), el("th", {}, "kind")));
  for (const p of node.pods || [])
    pods.append(el("tr", { "data-pod": p.pod }, el("td", {}, p.pod), el("td", {}, p.gpus.join(",")), el("td", {}, p.kind)));
  parts.push(el("h2", { style: "margin-top:10px" }, "Pods"), (node.pods || []).length ? pods : el("p", { class: "muted" }, "none"));
  for (const w of node.warnings || []) parts.push(el("p", { class: "warn" }, w));
  box.replaceChildren(...parts);
}

function select(name) {
  state.selected = name;
  renderNodes();
}

// A node's rows: its innermost domain's when they are few enough to draw, else the node alone.
function scopeOfNode(name, leafPath) {
  const count = leafPath ? (domainOfPath(leafPath) || { count: Infinity }).count : overview.names.length;
  return count <= state.rowsAtOnce ? { domain: leafPath } : { node: name };
}

function initialScope() {
  if (state.urlDomain !== null) return { domain: state.urlDomain };
  const i = state.selected ? overview.names.indexOf(state.selected) : -1;
  if (i >= 0) return scopeOfNode(state.selected, overview.leafOf[i]);
  return !overview.domains.length && overview.names.length <= state.rowsAtOnce ? { domain: "" } : null;
}

function setScope(scope) {
  state.scope = scope;
  state.nodes = [];
  state.total = 0;
  renderNodes();
  refreshRows().catch((err) => { document.getElementById("status").textContent = `refresh failed: ${err.message}`; });
}

function drill(path) { setScope({ domain: path }); }

function drillToNode(name, leafPath) {
  state.selected = name;
  setScope(scopeOfNode(name, leafPath));
}

// The rows of the scope, in full.
async function rowsOf(scope) {
  if (scope.node !== undefined) {
    const res = await fetch(`/api/v1/nodes/${encodeURIComponent(scope.node)}`, { cache: "no-store" });
    if (res.status === 404) return { nodes: [], total: 0 };
    if (!res.ok) throw new Error(`node: HTTP ${res.status}`);
    return { nodes: [await res.json()], total: 1 };
  }
  const url = `/api/v1/ui/nodes?domain=${encodeURIComponent(scope.domain)}&limit=${state.rowsAtOnce}`;
  const res = await fetch(url, { cache: "no-store" });
  if (res.status === 404) return { nodes: [], total: 0 };  // The domain is gone: its nodes left.
  if (!res.ok) throw new Error(`rows: HTTP ${res.status}`);
  return res.json();
}

async function refreshRows() {
  const scope = state.scope;
  const rows = scope ? await rowsOf(scope) : { nodes: [], total: 0 };
  if (scope !== state.scope) return;  // A click chose another scope meanwhile.
  state.nodes = rows.nodes;
  state.total = rows.total;
  renderNodes();
}

async function refresh() {
  if (state.busy) return;  // The last poll is still drawing: skip this one.
  state.busy = true;
  try {
    await refreshOverview();
    const first = state.scope === undefined;
    if (first) state.scope = initialScope();
    await refreshRows();
    // A domain opened from the URL may be far down the overview: bring its box into sight once.
    if (first) document.querySelector("#overview .domain.open")?.scrollIntoView({ block: "nearest" });
    document.getElementById("status").textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (err) {
    document.getElementById("status").textContent = `refresh failed: ${err.message}`;
  } finally {
    state.busy = false;
  }
}

async function explain() {
  const text = document.getElementById("pod").value;
  const out = document.getElementById("explain");
  out.replaceChildren(el("p", { class: "muted" }, "explaining…"));
  try {
    const json = text.trim().startsWith("{");
    const res = await fetch("/api/v1/explain", { method: "POST", body: text,
                                                 headers: { "Content-Type": json ? "application/json" : "application/yaml" } });
    const body = await res.json();
    if (!res.ok) {
      out.replaceChildren(el("p", { class: "error", id: "explain-error" }, body.error || `HTTP ${res.status}`));
      return;
    }
    renderExplain(body);
  } catch (err) {
    out.replaceChildren(el("p", { class: "error", id: "explain-error" }, err.message));
  }
}

function renderExplain(e) {
  const out = document.getElementById("explain");
  const summary = el("p", { id: "explain-summary" },
    `${e.pod}: ${e.gpus} GPU(s), policy ${e.policy}${e.minLink ? `, min link ${e.minLink}` : ""} → `,
    el("b", {}, e.chosen ? `best node ${e.chosen}` : "no node fits"));
  const table = el("table", { id: "verdicts" },
    el("tr", {}, ...["node", "result", "reason", "set", "GB/s", "worst link", "score", "parts"].map((h) => el("th", {}, h))));
  for (const n of e.nodes || []) {
    const parts = (n.parts || []).map((p) => `${p.plugin} ${+Number(p.value).toFixed(2)}×${p.weight}`).join(", ");
    table.append(el("tr", { class: `verdict ${n.result === "pass" ? "pass" : "fail"}${n.node === e.chosen ? " chosen" : ""}`,
                            "data-node": n.node, "data-result": n.result },
      el("td", {}, n.node), el("td", { class: "result" }, n.result), el("td", {}, n.reason || ""),
      el("td", {}, n.set ? n.set.join(",") + (n.setBy === "dra-first-fit" ? " (DRA first fit)" : "") : "-"), el("td", {}, n.set ? Number(n.bandwidthGBps).toFixed(1) : "-"),
      el("td", {}, n.worstLink || "-"), el("td", {}, n.set ? +Number(n.score).toFixed(2) : "-"), el("td", {}, parts)));
  }
  out.replaceChildren(summary, e.error ? el("p", { class: "error" }, e.error) : "", table);
}

function start() {
  const params = new URLSearchParams(location.search);
  const filter = document.getElementById("filter");
  filter.value = params.get("filter") || "";
  state.filter = filter.value;
  state.selected = params.get("node");
  state.urlDomain = params.get("domain");
  if (Number(params.get("rows")) > 0) state.rowsAtOnce = Math.floor(Number(params.get("rows")));
  document.getElementById("overview").addEventListener("click", onOverviewClick);
  filter.addEventListener("input", () => { state.filter = filter.value; renderNodes(); });
  document.getElementById("explain-btn").addEventListener("click", explain);
  if (params.has("explain")) {
    document.getElementById("pod").value = params.get("explain");
    explain();
  }
  refresh();
  setInterval(refresh, 2000);
}

start();
