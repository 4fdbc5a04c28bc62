// topofit web view, the overview: polls GET /api/v1/overview and draws the cluster by network domain,
// a box per domain (broadest level outside, natural order as the server sends it), each node a small
// tile coloured by its free GPUs. Names and domains come once: later polls send ?layout=KEY and get only
// each node's GPUs, free GPUs and state, which update the tiles in place; a new layout redraws the
// boxes. A click on a domain's head drills down to its nodes, a click on a tile to its node (app.js
// draws their rows). Plain DOM APIs only; every string from the server goes in as text.
"use strict";

const overview = { layout: "", levels: [], names: [], domains: [], paths: [], gpus: [], free: [], states: "",
                   tiles: [], heads: [], leafOf: [], loaded: false };

const kStateWords = { n: "no GPUs", w: "warnings", x: "GPUs held outside topofit, unhealthy or unusable" };

// Free GPUs in five colours: f0 none free .. f4 all free (f1-f3: under a third, under two thirds, more).
function tileClass(i) {
  const gpus = overview.gpus[i], free = overview.free[i], st = overview.states[i];
  if (!gpus) return "tile nogpu";
  const bucket = free === gpus ? 4 : free === 0 ? 0 : 1 + Math.min(2, Math.floor((3 * free) / gpus));
  return `tile f${bucket}${st === "w" ? " warn" : st === "x" ? " blocked" : ""}`;
}

function tileTitle(i) {
  const words = kStateWords[overview.states[i]];
  return `${overview.names[i]}: ${overview.free[i]}/${overview.gpus[i]} GPUs free${words ? ` · ${words}` : ""}`;
}

function domainStats(first, count) {
  let gpus = 0, free = 0;
  for (let i = first; i < first + count; i++) { gpus += overview.gpus[i]; free += overview.free[i]; }
  return `${count} node${count === 1 ? "" : "s"} · ${free}/${gpus} GPUs free`;
}

// Each domain's path ("s1/b2", "-" for no label), from the pre-order list of [depth, name, first, count].
function domainPaths(domains) {
  const stack = [];
  return domains.map(([depth, name]) => {
    stack.length = depth;
    stack.push(name === null ? "-" : name);
    return stack.join("/");
  });
}

// "block b7", "block (no block label)".
function domainLabel(k) {
  const [depth, name] = overview.domains[k];
  return `${overview.levels[depth]} ${name === null ? `(no ${overview.levels[depth]} label)` : name}`;
}

// A box's head: the domain's name, then its level and counts (updated each poll) in grey.
function domainHead(k) {
  const [depth, name] = overview.domains[k];
  const level = overview.levels[depth];
  const stats = el("span", { class: "muted" });
  const head = el("div", { class: "domain-head" }, el("b", {}, name === null ? `(no ${level} label)` : name), " ",
                  el("span", { class: "muted" }, `${level} · `), stats);
  return { head, stats };
}

function tileRun(first, count) {
  const run = el("div", { class: "tiles" });
  for (let i = first; i < first + count; i++) {
    const tile = el("div", { class: tileClass(i), "data-node": overview.names[i], title: tileTitle(i) });
    overview.tiles[i] = tile;
    run.append(tile);
  }
  return run;
}

// The boxes and tiles, from scratch (a new layout).
function buildOverview() {
  const box = document.getElementById("overview");
  const leafDepth = overview.levels.length - 1;
  overview.tiles = new Array(overview.names.length);
  overview.heads = [];
  overview.leafOf = new Array(overview.names.length).fill("");
  if (!overview.domains.length) {
    const head = el("div", { class: "domain-head" }, el("b", {}, "cluster"), " ", el("span", { class: "muted" }));
    overview.heads.push({ span: head.lastChild, first: 0, count: overview.names.length });
    box.replaceChildren(el("div", { class: "domain", "data-domain": "" }, head, tileRun(0, overview.names.length)));
    return;
  }
  // Built detached and attached once: one layout of the page, not one per box.
  const bodies = [];  // The box body open at each depth (pre-order: a domain's parent is the last above it).
  const roots = [];
  overview.domains.forEach(([depth, , first, count], k) => {
    const { head, stats } = domainHead(k);
    overview.heads.push({ span: stats, first, count });
    const body = depth === leafDepth ? tileRun(first, count) : el("div", { class: "domain-body" });
    if (depth === leafDepth) overview.leafOf.fill(overview.paths[k], first, first + count);
    const domain = el("div", { class: `domain depth-${Math.min(depth, 2)}`, "data-domain": overview.paths[k],
                               "data-level": overview.levels[depth] }, head, body);
    if (depth) bodies[depth - 1].append(domain);
    else roots.push(domain);
    bodies[depth] = body;
  });
  box.replaceChildren(...roots);
}

// The tiles' colours and the heads' counts, in place (the same layout).
function updateOverview() {
  for (let i = 0; i < overview.tiles.length; i++) {
    const tile = overview.tiles[i], cls = tileClass(i);
    if (tile.className !== cls) tile.className = cls;
    const title = tileTitle(i);
    if (tile.title !== title) tile.title = title;
  }
  for (const h of overview.heads) h.span.textContent = domainStats(h.first, h.count);
}

async function refreshOverview() {
  const res = await fetch(`/api/v1/overview?layout=${encodeURIComponent(overview.layout)}`, { cache: "no-store" });
  if (!res.ok) throw new Error(`overview: HTTP ${res.status}`);
  const body = await res.json();
  Object.assign(overview, { gpus: body.gpus, free: body.free, states: body.states, levels: body.levels });
  if (!body.unchanged) {
    Object.assign(overview, { layout: body.layout, names: body.nodes, domains: body.domains,
                              paths: domainPaths(body.domains) });
    buildOverview();
  }
  updateOverview();
  overview.loaded = true;
  const gpus = overview.gpus.reduce((s, g) => s + g, 0), free = overview.free.reduce((s, f) => s + f, 0);
  document.getElementById("totals").textContent = `${overview.names.length} nodes · ${free}/${gpus} GPUs free`;
}

function domainOfPath(path) {
  const k = overview.paths.indexOf(path);
  return k < 0 ? null : { label: domainLabel(k), count: overview.domains[k][3] };
}

// Clicks: a domain's head drills down to its nodes, a tile to its node (app.js's drill and select).
function onOverviewClick(event) {
  const tile = event.target.closest("[data-node]");
  if (tile) {
    const i = overview.names.indexOf(tile.dataset.node);
    drillToNode(tile.dataset.node, i >= 0 ? overview.leafOf[i] : "");
    return;
  }
  const head = event.target.closest(".domain-head");
  if (head) drill(head.parentElement.dataset.domain);
}
