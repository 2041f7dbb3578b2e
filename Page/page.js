// The board page (SPEC §8): one board, shown and edited through the server's API (§7).
//
// The page draws what `/show` says and sends what a hand did (`/commands`); the server's rules
// decide every outcome. The page follows the pointer clamped by R1 (as the server will clamp the
// path anyway) and tells a tray pull from a tray scroll by R5's numbers (so that the same gesture
// can go on to drag the new magnet); it never guesses a contact or a capture.

const SVG = "http://www.w3.org/2000/svg";
/** R5: a swipe is classed when it goes more than `ALONG` on one axis with less than `ACROSS`
 *  on the other (board points), as `Swipe.classify` does on the server. */
const ALONG = 16;
const ACROSS = 12;
/** SPEC §8: a path sent is thinned to at most this many points. */
const MAX_PATH = 10000;
/** One arrow-key step moves a magnet by this many points. */
const KEY_STEP = 10;
const AUTHOR_KEY = "magnets.author";

// MARK: - Where the board is

const boardName = decodeURIComponent(location.pathname.split("/").filter(Boolean)[1] || "");
const api = `/boards/${encodeURIComponent(boardName)}`;
const token = new URLSearchParams(location.hash.slice(1)).get("token") || "";
const palette = JSON.parse(document.getElementById("palette").textContent);

const $ = (id) => document.getElementById(id);
const ui = {
  title: $("title"), link: $("link"), who: $("who"), notice: $("notice"), nameForm: $("name-form"),
  nameInput: $("name-input"), tray: $("tray"), stage: $("stage"), svg: $("board"), zones: $("zones"),
  boundaries: $("boundaries"), magnets: $("magnets"), flashes: $("flashes"), toast: $("toast"),
  people: $("people"), handLabels: $("hand-labels"),
};

/** The page's state: the last `/show`, and what this page is doing to it. */
const state = {
  board: null,           // the object of `show --json`
  author: localStorage.getItem(AUTHOR_KEY) || "",
  access: "unknown",     // "write", "read" or "unknown"
  offline: true,
  drag: null,            // the gesture under way, if any
  pending: new Set(),    // magnets whose command is on its way
  seenLamport: 0,        // the largest Lamport number of the events seen
  scale: 1,
  me: null,              // this page's id in the lists of who is here
  people: [],            // who is on the board: [{person, name, access}]
  hands: new Map(),      // others' hands: person → {name, magnet | letter+color, x, y, node, label}
  landing: new Map(),    // magnets another hand let go of: id → {from: [x, y], until}, until the op lands
  ghosts: [],            // letters another hand pulled and let go of, shown until the op lands
};
window.magnetsPage = state; // for a person at the console (tests only ever read the DOM)

// MARK: - Talking to the server

function headers(json) {
  const h = {};
  if (token) h.Authorization = `Bearer ${token}`;
  if (json) h["Content-Type"] = "application/json";
  return h;
}

async function errorOf(response) {
  try { return (await response.json()).error || `${response.status}`; } catch { return `${response.status}`; }
}

let reading = null;
let readAgain = false;
/** Reads `/show` and redraws; calls made while one read is under way fold into one more read. */
async function refresh() {
  if (reading) { readAgain = true; return reading; }
  reading = (async () => {
    do {
      readAgain = false;
      try {
        const response = await fetch(`${api}/show`, { headers: headers(false), cache: "no-store" });
        if (!response.ok) { showNotice(await errorOf(response)); break; }
        state.board = await response.json();
        draw();
      } catch { setOffline(true); break; }
    } while (readAgain);
    reading = null;
  })();
  return reading;
}

/** Sends a command (`pull` or `move`); answers the server's outcome or throws its reason. */
async function send(command) {
  const response = await fetch(`${api}/commands`, {
    method: "POST", headers: headers(true), body: JSON.stringify({ ...command, author: state.author }),
  });
  if (!response.ok) throw new Error(await errorOf(response));
  return response.json();
}

/** May this token write? A command without a kind answers 403 to a read-only token and 400 to
 *  any other (SPEC §7 checks the token before the body), and records nothing. */
async function probeAccess() {
  try {
    const response = await fetch(`${api}/commands`, { method: "POST", headers: headers(true), body: "{}" });
    state.access = response.status === 403 || response.status === 401 ? "read" : "write";
    if (response.status === 403) {
      showNotice(`Read-only: ${await errorOf(response)} Dragging is off; you see every change live.`);
    }
  } catch { state.access = "unknown"; }
  updateControls();
}

// MARK: - Live: /events

let events = null;
let retry = 500;
/** Listens to the board's events; re-reads `/show` on each op (coalesced), and on every
 *  (re)connection, since ops may have come while it was away. Reconnects by itself. */
function listen() {
  const url = `${api}/events${token ? `?token=${encodeURIComponent(token)}` : ""}`;
  events = new EventSource(url);
  events.onopen = () => { retry = 500; setOffline(false); refresh(); };
  events.addEventListener("op", (message) => {
    let entry = null;
    try { entry = JSON.parse(message.data); } catch { }
    // An op above all seen changes the board from what this page shows; one that is not (a
    // concurrent op sorted earlier) may change earlier outcomes (SPEC §7): both are answered
    // by reading `/show`, which is always the server's whole truth.
    if (entry && typeof entry.lamport === "number") state.seenLamport = Math.max(state.seenLamport, entry.lamport);
    const ghosts = state.ghosts.splice(0);
    Promise.resolve(refresh()).then(() => { for (const ghost of ghosts) ghost.remove(); });
  });
  events.onerror = () => {
    events.close();
    setOffline(true);
    setTimeout(listen, retry);
    retry = Math.min(retry * 2, 5000);
  };
}

// MARK: - Others' hands: /live

/** A page sends its hand at most this often (SPEC §8: 30 a second). */
const HAND_INTERVAL = 1000 / 30;
/** It says it is still here this often (a page silent for 8 s leaves the others' lists). */
const HERE_INTERVAL = 2500;

let live = null;
let liveRetry = 500;
/** The live connection (PROTOCOL.md, "Hands and who is here"): this page joins under its name,
 *  sends its hand while it drags, and hears the others' hands and who is here. Ops still come
 *  by `/events`; a lost connection comes back by itself. */
function connectLive() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const url = `${scheme}://${location.host}${api}/live${token ? `?token=${encodeURIComponent(token)}` : ""}`;
  let socket;
  try { socket = new WebSocket(url); } catch { return; }
  live = socket;
  socket.onopen = () => { liveRetry = 500; join(); };
  socket.onmessage = (message) => {
    if (typeof message.data !== "string") return;
    let m = null;
    try { m = JSON.parse(message.data); } catch { return; }
    if (m.type === "hand") otherHand(m);
    else if (m.type === "hands") for (const hand of m.hands || []) otherHand(hand);
    else if (m.type === "present") present(m.people || []);
    else if (m.type === "joined") { state.me = m.person; drawPeople(); }
    else if (m.type === "hand-refused") console.warn(`hand refused: ${m.error}`);
  };
  socket.onclose = () => {
    if (live !== socket) return;
    live = null;
    for (const person of [...state.hands.keys()]) dropHand(person, false);
    present([]);
    setTimeout(connectLive, liveRetry);
    liveRetry = Math.min(liveRetry * 2, 5000);
  };
}

function sendLive(message) {
  if (live && live.readyState === WebSocket.OPEN) live.send(JSON.stringify(message));
}

/** Joins (again, after a rename) under this page's name; a viewer without one is "viewer". */
function join() { sendLive({ type: "join", name: state.author || "viewer" }); }

setInterval(() => sendLive({ type: "here" }), HERE_INTERVAL);

// A page going away (a closed tab, another address) leaves the others' lists at once; one
// coming back from the browser's cache joins again.
window.addEventListener("pagehide", () => {
  const socket = live;
  live = null;
  if (socket) { socket.onclose = null; socket.close(); }
});
window.addEventListener("pageshow", (event) => { if (event.persisted && !live) connectLive(); });

let handSent = 0;
let handTimer = null;
let handWaiting = null;
/** Sends where this page's hand is, at most 30 times a second (the latest wins). */
function sendHand(hand) {
  handWaiting = hand;
  if (handTimer) return;
  const wait = Math.max(0, handSent + HAND_INTERVAL - performance.now());
  handTimer = setTimeout(() => {
    handTimer = null;
    if (!handWaiting) return;
    handSent = performance.now();
    sendLive({ type: "hand", ...handWaiting });
    handWaiting = null;
  }, wait);
}

/** The hand let go: "released" (a command follows) or "cancelled" (the drag was given up). */
function sendGone(how) {
  clearTimeout(handTimer);
  handTimer = null;
  handWaiting = null;
  sendLive({ type: "hand", gone: how });
}

/** Another page's hand: the magnet it holds (or the letter it pulls) moves there, marked with
 *  its name; when it lets go the magnet stays until the op's outcome comes, or goes back. */
function otherHand(m) {
  const person = m.person;
  if (m.gone) { dropHand(person, m.gone === "released"); return; }
  let hand = state.hands.get(person);
  const holding = m.magnet ? `m:${m.magnet}` : `t:${m.letter}\u0000${m.color}`;
  if (hand && hand.holding !== holding) { dropHand(person, false); hand = null; }
  if (!hand) {
    hand = { holding, name: m.name, magnet: m.magnet || null, node: null, ghost: false, from: null };
    if (m.magnet) {
      hand.node = magnetNodes.get(m.magnet) || null;
      const known = state.board && state.board.magnets.find((x) => x.id === m.magnet);
      if (known) hand.from = [known.x, known.y];
    } else if (state.board) {
      const tile = state.board.tray.find((t) => t.letter === m.letter && t.color === m.color);
      if (tile) { hand.node = newMagnet(tile); hand.node.classList.remove("dragging"); hand.ghost = true; }
    }
    if (!hand.node) return;
    hand.label = el("text", { class: "hand-label", "data-person": person }, ui.handLabels);
    state.hands.set(person, hand);
  }
  // This page's own drag of the same magnet wins on this page.
  if (state.drag && state.drag.id === hand.magnet) return;
  hand.name = m.name;
  hand.x = m.x;
  hand.y = m.y;
  hand.node.classList.add("held");
  hand.node.dataset.heldBy = m.name;
  place(hand.node, m.x, m.y);
  ui.magnets.appendChild(hand.node);
  const size = textSize(12);
  const height = hand.node.getBBox ? hand.node.getBBox().height : 50;
  hand.label.textContent = m.name;
  hand.label.setAttribute("x", m.x);
  hand.label.setAttribute("y", m.y + height / 2 + size * 1.2);
  hand.label.setAttribute("font-size", size);
}

/** A hand let go. Released: the magnet stays where it was let go until the op's outcome comes
 *  (the board read back shows it moved, or 3 s pass); otherwise it goes back where the board
 *  has it. */
function dropHand(person, released) {
  const hand = state.hands.get(person);
  if (!hand) return;
  state.hands.delete(person);
  hand.label.remove();
  hand.node.classList.remove("held");
  delete hand.node.dataset.heldBy;
  if (hand.ghost) {
    if (!released) { hand.node.remove(); return; }
    state.ghosts.push(hand.node);
    setTimeout(() => hand.node.remove(), 3000);
    return;
  }
  const m = state.board && state.board.magnets.find((m) => m.id === hand.magnet);
  // (An outcome that came before the hand's release is shown at once.)
  if (released && hand.from && m && m.x === hand.from[0] && m.y === hand.from[1]) {
    state.landing.set(hand.magnet, { from: hand.from, until: performance.now() + 3000 });
    setTimeout(() => { if (state.board) drawMagnets(state.board); }, 3050);
    return;
  }
  if (m && !(state.drag && state.drag.id === m.id) && !state.pending.has(m.id)) place(hand.node, m.x, m.y);
}

/** The list of who is on the board; hands of people gone are dropped (put back). */
function present(people) {
  state.people = people;
  const here = new Set(people.map((p) => p.person));
  for (const person of [...state.hands.keys()]) if (!here.has(person)) dropHand(person, false);
  drawPeople();
}

function drawPeople() {
  const items = state.people.map((p) => {
    const item = document.createElement("li");
    item.dataset.person = p.person;
    item.dataset.access = p.access;
    item.textContent = p.name + (p.person === state.me ? " (you)" : "") + (p.access === "read" ? " 👁" : "");
    item.title = p.access === "read" ? `${p.name} is watching (read-only)` : `${p.name} may edit`;
    return item;
  });
  ui.people.replaceChildren(...items);
  ui.people.hidden = items.length === 0;
}

function setOffline(offline) {
  state.offline = offline;
  ui.link.textContent = offline ? "offline — reconnecting…" : "live";
  ui.link.classList.toggle("offline", offline);
}

// MARK: - Drawing

function el(name, attributes = {}, parent = null) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

function paint(color) {
  const key = String(color).toLowerCase().replaceAll("-", "").replaceAll("grey", "gray");
  return palette[key] || palette[""];
}

/** R1 for a magnet of size w×h on the board: each axis on its own. */
function clamp(x, y, w, h) {
  const W = state.board.board.width;
  const H = state.board.board.height;
  const cx = w <= W ? Math.min(Math.max(x, w / 2), W - w / 2) : Math.min(Math.max(x, W - w / 2), w / 2);
  const cy = h <= H ? Math.min(Math.max(y, h / 2), H - h / 2) : Math.min(Math.max(y, H - h / 2), h / 2);
  return [cx, cy];
}

/** Fits the board into the window (the tray's strip is above it). */
function fit() {
  if (!state.board) return;
  const { width: W, height: H } = state.board.board;
  const stage = ui.stage.getBoundingClientRect();
  const availableWidth = Math.max(100, document.documentElement.clientWidth - 24);
  const availableHeight = Math.max(160, window.innerHeight - stage.top - 44);
  state.scale = Math.min(availableWidth / W, availableHeight / H);
  ui.svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  ui.svg.setAttribute("width", Math.floor(W * state.scale));
  ui.svg.setAttribute("height", Math.floor(H * state.scale));
}

/** Text sizes in board points that read at least about `px` pixels on the screen. */
function textSize(px) {
  const { width: W, height: H } = state.board.board;
  return Math.max((px * Math.max(W, H)) / 1000, px * 0.85 / state.scale);
}

function draw() {
  const show = state.board;
  ui.title.textContent = `${show.board.name || boardName}`;
  document.title = `${show.board.name || boardName} — magnets`;
  fit();
  const { width: W, height: H } = show.board;
  const face = ui.svg.querySelector(".board-face");
  face.setAttribute("width", W);
  face.setAttribute("height", H);
  face.setAttribute("rx", (6 * Math.max(W, H)) / 1000);
  drawZones(show);
  drawBoundaries(show);
  drawMagnets(show);
  drawTray(show);
  updateControls();
}

function drawZones(show) {
  ui.zones.replaceChildren();
  const size = textSize(12);
  for (const zone of show.zones) {
    const n = zone.magnets.length;
    const full = n >= zone.capacity;
    el("rect", {
      class: `zone${full ? " full" : ""}`, x: zone.x, y: zone.y, width: zone.width, height: zone.height,
      rx: Math.min(6, zone.width / 4, zone.height / 4), "data-zone": zone.name,
    }, ui.zones);
    const above = zone.y - size * 1.5 >= 0;
    const label = el("text", {
      class: `zone-label${full ? " full" : ""}`, x: Math.max(zone.x, 0) + 2,
      y: above ? zone.y - size * 0.5 : Math.max(zone.y, 0) + size * 1.25, "font-size": size,
      "data-zone": zone.name, "data-count": n,
    }, ui.zones);
    el("tspan", { class: "name" }, label).textContent = zone.name;
    el("tspan", {}, label).textContent = ` ${n}/${zone.capacity}` + (zone.accepts ? ` · ${zone.accepts.join(", ")}` : "");
  }
}

function drawBoundaries(show) {
  ui.boundaries.replaceChildren();
  const size = textSize(11);
  for (const b of show.boundaries) {
    el("line", { class: "boundary", x1: b.from[0], y1: b.from[1], x2: b.to[0], y2: b.to[1], "data-boundary": b.name },
      ui.boundaries);
    const mx = (b.from[0] + b.to[0]) / 2;
    const my = (b.from[1] + b.to[1]) / 2;
    el("text", { class: "boundary-label", x: mx + 6, y: my - 8, "font-size": size }, ui.boundaries).textContent = b.name;
  }
}

/** Magnets by id, reused from draw to draw (so focus and a drag survive a redraw), in z order. */
const magnetNodes = new Map();

function drawMagnets(show) {
  const live = new Set();
  const focused = document.activeElement;
  let index = 0;
  const sorted = [...show.magnets].sort((a, b) => a.z - b.z);
  for (const m of sorted) {
    live.add(m.id);
    let node = magnetNodes.get(m.id);
    if (!node) {
      node = el("g", { class: "magnet", tabindex: "0", role: "button", "data-id": m.id });
      el("rect", { class: "body" }, node);
      el("rect", { class: "gloss", fill: "url(#gloss)" }, node);
      el("text", { class: "letter", x: 0, y: 0 }, node);
      node.addEventListener("pointerdown", (event) => startMagnetDrag(event, m.id));
      node.addEventListener("keydown", (event) => keyMove(event, m.id));
      magnetNodes.set(m.id, node);
    }
    const [fill, ink] = paint(m.color);
    const body = node.children[0];
    const corner = Math.min(m.width, m.height) * 0.16;
    for (const rect of [node.children[0], node.children[1]]) {
      rect.setAttribute("x", -m.width / 2);
      rect.setAttribute("y", -m.height / 2);
      rect.setAttribute("width", m.width);
      rect.setAttribute("height", m.height);
      rect.setAttribute("rx", corner);
    }
    body.setAttribute("fill", fill);
    const letter = node.children[2];
    letter.textContent = m.letter;
    letter.setAttribute("fill", ink);
    letter.setAttribute("font-size", Math.min(m.height * 0.62, m.width * 0.78));
    node.classList.toggle("captured", m.zone !== null);
    node.dataset.zone = m.zone ?? "";
    node.setAttribute("aria-label",
      `${m.letter}, ${m.color}, at ${round(m.x)}, ${round(m.y)}${m.zone ? `, in zone ${m.zone}` : ""}`);
    // A magnet being dragged here stays under the finger until its command is answered.
    // One another hand holds stays under it; one it let go of stays until the op lands.
    const landing = state.landing.get(m.id);
    const waiting = landing && landing.from[0] === m.x && landing.from[1] === m.y && performance.now() < landing.until;
    if (landing && !waiting) state.landing.delete(m.id);
    if (!(state.drag && state.drag.id === m.id) && !state.pending.has(m.id) && !node.classList.contains("held") &&
      !waiting) {
      place(node, m.x, m.y);
    }
    // z order: the last is on top. Only nodes out of place move (moving one drops its focus).
    if (ui.magnets.children[index] !== node) ui.magnets.insertBefore(node, ui.magnets.children[index] || null);
    index++;
  }
  if (focused && focused.isConnected && document.activeElement !== focused) focused.focus();
  for (const [id, node] of magnetNodes) {
    if (!live.has(id)) { node.remove(); magnetNodes.delete(id); }
  }
  if (state.drag && state.drag.node) ui.magnets.appendChild(state.drag.node);
}

function place(node, x, y) {
  node.setAttribute("transform", `translate(${x} ${y})`);
  node.dataset.x = x;
  node.dataset.y = y;
}

const round = (v) => Math.round(v * 10) / 10;

function drawTray(show) {
  const tiles = [];
  show.tray.forEach((tile, index) => {
    const [fill, ink] = paint(tile.color);
    const node = document.createElement("div");
    const left = tile.remaining === null ? "∞" : `×${tile.remaining}`;
    node.className = `tile${tile.remaining === 0 ? " empty" : ""}`;
    node.setAttribute("role", "listitem");
    node.dataset.letter = tile.letter;
    node.dataset.color = tile.color;
    node.dataset.index = index;
    node.dataset.remaining = tile.remaining === null ? "unlimited" : tile.remaining;
    node.title = `'${tile.letter}' ${tile.color}: ${tile.remaining === null ? "unlimited" : `${tile.remaining} left`}`;
    const face = document.createElement("span");
    face.className = "face";
    face.style.background = fill;
    face.style.color = ink;
    face.textContent = tile.letter;
    const count = document.createElement("span");
    count.className = "count";
    count.textContent = left;
    node.append(face, count);
    node.addEventListener("pointerdown", (event) => startTrayGesture(event, tile));
    tiles.push(node);
  });
  const scroll = ui.tray.scrollLeft;
  ui.tray.replaceChildren(...tiles);
  ui.tray.scrollLeft = scroll;
}

function updateControls() {
  const readOnly = state.access === "read";
  document.body.classList.toggle("readonly", readOnly);
  ui.nameForm.hidden = readOnly || Boolean(state.author);
  ui.who.hidden = readOnly || !state.author;
  ui.who.textContent = state.author ? `as ${state.author}` : "";
}

// MARK: - Pointer → board

/** The board point under a pointer event (y < 0 above the board, over the tray). */
function boardPoint(event) {
  const r = ui.svg.getBoundingClientRect();
  const { width: W, height: H } = state.board.board;
  return [((event.clientX - r.left) * W) / r.width, ((event.clientY - r.top) * H) / r.height];
}

/** Why this page may not drag now, or null. */
function cannotDrag() {
  if (!state.board) return "the board is not loaded yet";
  if (state.access === "read") return "this link is read-only: it shows the board but cannot change it";
  if (!state.author) return "give your name first (it goes into the board's history)";
  return null;
}

/** R5's class of a point reached from `start`, or null (written once, here). */
function classify([x, y], [sx, sy]) {
  const dx = x - sx;
  const dy = y - sy;
  if (dy > ALONG && Math.abs(dx) < ACROSS) return "down";
  if (-dy > ALONG && Math.abs(dx) < ACROSS) return "up";
  if (dx > ALONG && Math.abs(dy) < ACROSS) return "right";
  if (-dx > ALONG && Math.abs(dy) < ACROSS) return "left";
  return null;
}

/** At most `MAX_PATH` points, repeats dropped, the first and last kept, and the point at index
 *  `keep` too (where a pull was recognised: the points before it reach no class, so any of
 *  them may go and the server still recognises the swipe at that same point). */
function thin(points, keep = -1) {
  const out = [];
  let kept = -1;
  points.forEach((p, i) => {
    const last = out[out.length - 1];
    if (!last || last[0] !== p[0] || last[1] !== p[1]) out.push(p);
    if (i === keep) kept = out.length - 1;
  });
  if (out.length <= MAX_PATH) return out;
  const picked = new Set([0, out.length - 1]);
  if (kept > 0) picked.add(kept);
  const step = (out.length - 1) / (MAX_PATH - 3);
  for (let i = 1; picked.size < MAX_PATH; i++) picked.add(Math.min(out.length - 1, Math.round(i * step)));
  return [...picked].sort((a, b) => a - b).map((i) => out[i]);
}

// MARK: - Dragging a magnet

function startMagnetDrag(event, id) {
  if (event.button !== 0 || state.drag) return;
  const reason = cannotDrag();
  if (reason) { toast(`Dragging is off: ${reason}.`); if (!state.author) ui.nameInput.focus(); return; }
  const m = state.board.magnets.find((m) => m.id === id);
  if (!m || state.pending.has(id)) return;
  event.preventDefault();
  const node = magnetNodes.get(id);
  const [px, py] = boardPoint(event);
  state.drag = { kind: "move", id, node, magnet: m, offset: [m.x - px, m.y - py], path: [], pointer: event.pointerId };
  node.classList.add("dragging");
  ui.magnets.appendChild(node);
  ui.svg.setPointerCapture(event.pointerId);
}

function dragTo(event) {
  const drag = state.drag;
  const points = event.getCoalescedEvents ? event.getCoalescedEvents() : [];
  for (const e of points.length ? points : [event]) {
    const [px, py] = boardPoint(e);
    const m = drag.magnet;
    const [x, y] = clamp(px + drag.offset[0], py + drag.offset[1], m.width, m.height);
    drag.path.push([x, y]);
    place(drag.node, x, y);
    sendHand({ magnet: drag.id, x, y });
  }
}

async function endMagnetDrag(event, cancelled) {
  const drag = state.drag;
  state.drag = null;
  drag.node.classList.remove("dragging");
  // The press focused the captured board, not the magnet: focus the magnet, so that arrow keys
  // move the one last touched.
  drag.node.focus({ preventScroll: true });
  const path = thin(drag.path);
  const m = drag.magnet;
  if (cancelled || path.length === 0 || path.every(([x, y]) => x === m.x && y === m.y)) {
    if (path.length) sendGone("cancelled");
    place(drag.node, m.x, m.y);
    return;
  }
  sendGone("released");
  await commit(drag.node, m.id, { kind: "move", magnet: m.id, path });
}

/** Sends a move or a pull for the magnet shown by `node`, puts it where the server says and
 *  shows what happened; a refusal puts it back and shows why. */
async function commit(node, id, command, onRefused) {
  if (id) state.pending.add(id);
  node.classList.add("pending");
  try {
    const answer = await send(command);
    if (id) state.pending.delete(id);
    place(node, answer.x, answer.y);
    node.classList.remove("pending");
    const known = state.board.magnets.find((m) => m.id === answer.magnet);
    if (known) { known.x = answer.x; known.y = answer.y; known.zone = answer.zone; }
    flash(answer);
    await refresh();
    // A pulled magnet was drawn by the page until the board read back has it.
    if (!id) node.remove();
  } catch (error) {
    if (id) state.pending.delete(id);
    node.classList.remove("pending");
    if (onRefused) onRefused(); else {
      const m = state.board.magnets.find((m) => m.id === id);
      if (m) place(node, m.x, m.y);
    }
    toast(`Refused: ${error.message}`, true);
    refresh();
  }
}

/** A short word where the magnet ended: what the rules made of the drag. */
function flash(answer) {
  const words = [];
  for (const e of answer.events || []) {
    if (e.event === "capture") words.push(`captured by ${e.zone}`);
    else if (e.event === "recapture") words.push(`back in ${e.zone}`);
    else if (e.event === "escape") words.push(`out of ${e.zone}`);
    else if (e.event === "contact") words.push(`stopped by ${e.boundary}`);
    else if (e.event === "pulled" && !answer.events.some((x) => x.event === "capture")) words.push("pulled out");
  }
  ui.svg.dataset.outcome = (answer.events || []).map((e) => e.event).join(" ");
  if (!words.length) return;
  const text = el("text", {
    class: "flash", x: answer.x, y: answer.y - textSize(14) * 2.2, "font-size": textSize(14),
  }, ui.flashes);
  text.textContent = words.join(", ");
  setTimeout(() => text.remove(), 1700);
}

// MARK: - Pulling a letter out of the tray (R5)

function startTrayGesture(event, tile) {
  if (event.button !== 0 || state.drag) return;
  const reason = cannotDrag();
  event.preventDefault();
  const start = boardPoint(event);
  state.drag = {
    kind: "tray", tile, start, path: [start], pointer: event.pointerId, swipe: null, node: null,
    scroll: ui.tray.scrollLeft, clientX: event.clientX, reason,
  };
  // The strip keeps the pointer (a redraw may replace the tile) until the gesture ends.
  ui.tray.setPointerCapture(event.pointerId);
}

function trayMove(event) {
  const drag = state.drag;
  const points = event.getCoalescedEvents ? event.getCoalescedEvents() : [];
  for (const e of points.length ? points : [event]) {
    const p = boardPoint(e);
    if (!drag.swipe) {
      drag.path.push(p);
      drag.swipe = classify(p, drag.start);
      if (drag.swipe === "down") {
        if (drag.reason || drag.tile.remaining === 0) {
          drag.swipe = "refused";
          toast(drag.reason ? `Dragging is off: ${drag.reason}.` : `No '${drag.tile.letter}' left in the tray.`, true);
          continue;
        }
        drag.recognised = drag.path.length - 1;
        drag.node = newMagnet(drag.tile);
        const [x, y] = clamp(p[0], p[1], drag.tile.width, drag.tile.height);
        place(drag.node, x, y);
        sendHand({ letter: drag.tile.letter, color: drag.tile.color, x, y });
      }
    } else if (drag.swipe === "down") {
      drag.path.push(p);
      const [x, y] = clamp(p[0], p[1], drag.tile.width, drag.tile.height);
      place(drag.node, x, y);
      sendHand({ letter: drag.tile.letter, color: drag.tile.color, x, y });
    } else if (drag.swipe === "left" || drag.swipe === "right") {
      // A sideways swipe scrolls the strip, following the finger; nothing is pulled.
      ui.tray.scrollLeft = drag.scroll - (e.clientX - drag.clientX);
    }
  }
}

/** A magnet drawn for a pull under way (not yet on the board: the server makes it). */
function newMagnet(tile) {
  const node = el("g", { class: "magnet dragging", "data-id": "" });
  const [fill, ink] = paint(tile.color);
  const corner = Math.min(tile.width, tile.height) * 0.16;
  for (const cls of ["body", "gloss"]) {
    el("rect", {
      class: cls, x: -tile.width / 2, y: -tile.height / 2, width: tile.width, height: tile.height, rx: corner,
      fill: cls === "body" ? fill : "url(#gloss)",
    }, node);
  }
  const letter = el("text", {
    class: "letter", x: 0, y: 0, fill: ink, "font-size": Math.min(tile.height * 0.62, tile.width * 0.78),
  }, node);
  letter.textContent = tile.letter;
  ui.magnets.appendChild(node);
  return node;
}

async function endTrayGesture(event, cancelled) {
  const drag = state.drag;
  state.drag = null;
  if (drag.swipe !== "down") return;
  drag.node.classList.remove("dragging");
  sendGone(cancelled ? "cancelled" : "released");
  if (cancelled) { drag.node.remove(); return; }
  const path = thin(drag.path, drag.recognised);
  await commit(drag.node, null, { kind: "pull", letter: drag.tile.letter, color: drag.tile.color, path },
    () => drag.node.remove());
}

// MARK: - One listener for every gesture

function pointerMove(event) {
  const drag = state.drag;
  if (!drag || event.pointerId !== drag.pointer) return;
  event.preventDefault();
  if (drag.kind === "move") dragTo(event); else trayMove(event);
}

function pointerEnd(event) {
  const drag = state.drag;
  if (!drag || event.pointerId !== drag.pointer) return;
  const cancelled = event.type === "pointercancel";
  if (drag.kind === "move") endMagnetDrag(event, cancelled); else endTrayGesture(event, cancelled);
}

/** Escape gives a drag up: the magnet goes back (a pull is dropped), and nothing is sent. */
document.addEventListener("keydown", (event) => {
  const drag = state.drag;
  if (event.key !== "Escape" || !drag) return;
  event.preventDefault();
  for (const target of [ui.svg, ui.tray]) {
    try { if (target.hasPointerCapture(drag.pointer)) target.releasePointerCapture(drag.pointer); } catch { }
  }
  if (drag.kind === "move") endMagnetDrag(event, true); else endTrayGesture(event, true);
});

for (const target of [ui.svg, ui.tray]) {
  target.addEventListener("pointermove", pointerMove);
  target.addEventListener("pointerup", pointerEnd);
  target.addEventListener("pointercancel", pointerEnd);
}

// MARK: - Keyboard

function keyMove(event, id) {
  const steps = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
  const step = steps[event.key];
  if (!step) return;
  event.preventDefault();
  const reason = cannotDrag();
  if (reason) { toast(`Moving is off: ${reason}.`); return; }
  const m = state.board.magnets.find((m) => m.id === id);
  if (!m || state.pending.has(id)) return;
  commit(magnetNodes.get(id), id, { kind: "move", magnet: id, to: [m.x + step[0] * KEY_STEP, m.y + step[1] * KEY_STEP] });
}

// MARK: - Messages and the author

let toastTimer = null;
function toast(text, error = false) {
  ui.toast.textContent = text;
  ui.toast.classList.toggle("error", error);
  ui.toast.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { ui.toast.hidden = true; }, error ? 5000 : 2500);
}

function showNotice(text) {
  ui.notice.textContent = text;
  ui.notice.hidden = false;
}

ui.nameForm.addEventListener("submit", (event) => {
  event.preventDefault();
  const name = ui.nameInput.value.trim();
  if (!name) return;
  state.author = name;
  localStorage.setItem(AUTHOR_KEY, name);
  updateControls();
  join();
});

ui.who.addEventListener("click", () => {
  ui.nameInput.value = state.author;
  state.author = "";
  updateControls();
  ui.nameInput.focus();
});

// MARK: - Start

function gloss() {
  const defs = el("defs", {}, null);
  const gradient = el("linearGradient", { id: "gloss", x1: 0, y1: 0, x2: 0, y2: 1 }, defs);
  el("stop", { offset: 0, "stop-color": "#ffffff", "stop-opacity": 0.28 }, gradient);
  el("stop", { offset: 0.5, "stop-color": "#ffffff", "stop-opacity": 0.04 }, gradient);
  el("stop", { offset: 1, "stop-color": "#000000", "stop-opacity": 0.08 }, gradient);
  ui.svg.prepend(defs);
}

gloss();
updateControls();
if (!token) showNotice("This link has no #token=…: ask for the board's link, or open a server started with --open.");
window.addEventListener("resize", () => { if (state.board) draw(); });
probeAccess();
refresh();
listen();
connectLive();
