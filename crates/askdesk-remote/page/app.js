// The phone page's script: pairing (a non-extractable P-256 key made here, the token proved with
// an HMAC over its public key, the 6-digit code shown), the device socket (a signed hello, the
// waiting requests, newest on top) and signed answers (docs/remote.md, "What a phone signs").
// Every request arrives with the desk's own view of it (askdesk-view's RequestView: the sanitized
// detail HTML, the plan's blocks); this script renders no markdown and sets every other string as
// text. Passkeys and permission prompts are passkey.js's; Web Push is push.js's.

import { passkeys } from './passkey.js';
import { subscribePush } from './push.js';
import { locale, t, tAttr, translate, useCatalogue } from './l10n.js';

const DB = 'askdesk';
/** How long a claimed pairing waits for the desk (docs/remote.md, "Pairing"), and a little more. */
const CONFIRM_WITHIN_MS = 125000;
const STORE = 'device';
const enc = new TextEncoder();

// --- bytes, base64url, canonical JSON ---

/** Standard base64 (a picture's `data`). */
function b64(bytes) {
  let text = '';
  for (const b of new Uint8Array(bytes)) text += String.fromCharCode(b);
  return btoa(text);
}

function b64u(bytes) {
  return b64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function unb64u(text) {
  const raw = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

/** RFC 8785 as docs/remote.md states it: keys sorted by UTF-16 code units, JSON.stringify's escapes. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

async function sha256(bytes) {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
}

async function sign(key, value) {
  const signature = await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, key, enc.encode(canonical(value)));
  return b64u(signature);
}

// --- the device key, kept in IndexedDB (the private key cannot be read out of it) ---

function db() {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(DB, 1);
    open.onupgradeneeded = () => open.result.createObjectStore(STORE);
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
}

async function stored(mode, act) {
  const d = await db();
  return new Promise((resolve, reject) => {
    const tx = d.transaction(STORE, mode);
    const request = act(tx.objectStore(STORE));
    tx.oncomplete = () => resolve(request.result);
    tx.onerror = () => reject(tx.error);
  });
}

const loadDevice = () => stored('readonly', (s) => s.get('key'));
const saveDevice = (device) => stored('readwrite', (s) => s.put(device, 'key'));

// --- showing text ---

/**
 * Text an agent supplied, with every control character (C0, DEL, C1) and bidi control (U+061C,
 * U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069) written as its code point, `\u{202e}`: the
 * rule askdesk's command line applies (askdesk-cli's terminal.rs), so a label cannot hide or
 * reorder what it says. Line breaks and tabs are kept.
 */
function shown(text) {
  return String(text).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u{${c.codePointAt(0).toString(16)}}`);
}

/** A label without its trailing "(Recommended)", as the desk shows it (ui/dom.js displayLabel). */
function displayLabel(label) {
  return label.replace(/\s*\(Recommended\)\s*$/, '');
}

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === false || v == null) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const child of children.flat()) {
    if (child == null || child === false) continue;
    el.append(child instanceof Node ? child : shown(child));
  }
  return el;
}

const hhmm = (date = new Date()) => date.toLocaleTimeString(locale(), { timeStyle: 'short' });
const main = () => document.getElementById('main');
const statusLine = (text, kind) => {
  const el = document.getElementById('status');
  el.textContent = text;
  el.className = `status ${kind || ''}`;
};

// --- pairing ---

async function hmac(token, bytes) {
  const key = await crypto.subtle.importKey('raw', token, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, bytes));
}

async function pairingCode(token, publicKey) {
  const label = enc.encode('askdesk pairing code v1');
  const message = new Uint8Array(label.length + publicKey.length);
  message.set(label);
  message.set(publicKey, label.length);
  const mac = await hmac(token, message);
  const n = new DataView(mac.buffer).getUint32(0, false) % 1000000;
  return String(n).padStart(6, '0');
}

function pairPage(token) {
  const name = h('input', { id: 'device-name', type: 'text', maxlength: '64', value: t('phone-default-name'), autocomplete: 'off' });
  const error = h('p', { class: 'error', role: 'alert', hidden: true });
  const button = h('button', { id: 'pair', class: 'button primary big', type: 'button' }, t('phone-pair-button'));
  button.addEventListener('click', async () => {
    button.disabled = true;
    error.hidden = true;
    try {
      await pair(token, name.value.trim() || t('phone-default-name'));
    } catch (e) {
      error.textContent = shown(e.message);
      error.hidden = false;
      button.disabled = false;
    }
  });
  main().replaceChildren(h('section', { class: 'card pairing' },
    h('h2', {}, t('phone-pair-title')),
    h('p', {}, t('phone-pair-text')),
    h('label', { for: 'device-name' }, t('phone-pair-name')), name, button, error));
}

const PAIR_ERRORS = {
  'bad-proof': 'phone-pair-bad-proof',
  'too-many-tries': 'phone-pair-too-many-tries',
  expired: 'phone-pair-expired',
  'already-used': 'phone-pair-already-used',
};

async function pair(token, name) {
  const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);
  const publicKey = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
  const proof = await hmac(token, publicKey);
  const response = await fetch('/pair', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ publicKey: b64u(publicKey), proof: b64u(proof), name }),
  });
  if (response.status !== 202) {
    const body = await response.json().catch(() => ({}));
    throw new Error(PAIR_ERRORS[body.error] ? t(PAIR_ERRORS[body.error]) : t('phone-pair-refused', { status: response.status }));
  }
  state.device = { privateKey: pair.privateKey, publicKey: b64u(publicKey), name, pairedAt: Date.now() };
  await saveDevice(state.device);
  const code = await pairingCode(token, publicKey);
  main().replaceChildren(h('section', { class: 'card pairing' },
    h('h2', {}, t('phone-confirm-title')),
    h('p', {}, t('phone-confirm-text')),
    h('p', { id: 'pair-code', class: 'code', 'aria-label': code.split('').join(' ') }, `${code.slice(0, 3)} ${code.slice(3)}`),
    h('p', { class: 'muted' }, t('phone-confirm-then'))));
  history.replaceState(null, '', '/');
  state.confirming = true;
  connect();
  // The desk has the claimed offer's lifetime again (120 s) to confirm; past it, nothing will.
  setTimeout(() => {
    if (!state.confirming) return;
    state.stopped = true;
    if (state.socket) state.socket.close();
    statusLine(t('phone-not-paired'), 'warn');
    main().replaceChildren(h('section', { class: 'card' }, h('h2', {}, t('phone-not-confirmed-title')),
      h('p', {}, t('phone-not-confirmed-text'))));
  }, CONFIRM_WITHIN_MS);
}

// --- the socket ---

const state = {
  device: null,
  socket: null,
  /**
   * Cards by request id, each { wire, node, phase, forms, ending? }; phase: waiting, claimed (by
   * another device), sending, accepted, gone (refused as no longer waiting, its reason to come),
   * ended. `ending`: why the desk withdrew it while this phone was sending.
   */
  cards: new Map(),
  unreachableSince: null,
  /** The countdowns' next tick, while a deadline runs. */
  ticking: null,
  backoff: 500,
  stopped: false,
  confirming: false,
};

function connect() {
  if (state.stopped) return;
  const socket = new WebSocket(`wss://${location.host}/socket`);
  state.socket = socket;
  socket.addEventListener('message', (event) => receive(socket, JSON.parse(event.data)).catch((e) => console.error(e)));
  socket.addEventListener('close', () => {
    if (state.socket !== socket) return;
    state.socket = null;
    if (state.stopped) return;
    if (!state.confirming) {
      state.unreachableSince = state.unreachableSince || new Date();
      statusLine(t('phone-unreachable', { time: hhmm(state.unreachableSince) }), 'warn');
    }
    const wait = state.backoff;
    // While the desk confirms a pairing, the next try comes soon after the person typed the code.
    state.backoff = Math.min(state.backoff * 2, state.confirming ? 2000 : 30000);
    setTimeout(connect, wait);
  });
}

async function receive(socket, message) {
  switch (message.type) {
    case 'challenge': {
      const signature = await sign(state.device.privateKey,
        { challenge: message.challenge, kind: 'askdesk/hello', origin: location.origin, v: 1 });
      socket.send(JSON.stringify({ type: 'hello', publicKey: state.device.publicKey, signature }));
      break;
    }
    case 'welcome':
      state.confirming = false;
      state.backoff = 500;
      state.unreachableSince = null;
      statusLine(t('phone-connected', { device: shown(message.device) }), 'ok');
      if (!document.getElementById('requests')) showRequests();
      passkey.state(message.passkey);
      subscribePush({ device: state.device, sign, unb64u });
      break;
    case 'requests': {
      const held = new Set(message.requests.map((r) => r.id));
      for (const [id, card] of state.cards) {
        if (held.has(id)) continue;
        if (['waiting', 'claimed', 'gone'].includes(card.phase)) endCard(id, t('phone-ended', { why: t('phone-no-longer-waiting'), time: hhmm() }));
        // The socket dropped before the desk said how this phone's answer fared.
        else if (card.phase === 'sending' || card.phase === 'accepted') {
          endCard(id, t('phone-lost', { time: hhmm() }), 'lost');
        }
      }
      for (const request of message.requests) {
        const card = state.cards.get(request.id);
        if (!card || card.phase !== 'waiting') addCard(request);
        else card.wire.deadline = request.deadline;
      }
      tickCountdowns();
      break;
    }
    case 'request':
      addCard(message.request);
      tickCountdowns();
      break;
    case 'deadline': {
      const card = state.cards.get(message.id);
      if (card) card.wire.deadline = message.deadline;
      tickCountdowns();
      break;
    }
    case 'withdrawn': {
      const card = state.cards.get(message.id);
      if (!card) break;
      // Another device's answer claimed it: `settled` says how the desk took that answer.
      if (message.reason === 'claimed') {
        if (card.phase === 'waiting') setPhase(message.id, 'claimed', t('phone-claimed'));
        break;
      }
      // A card this phone answered waits for `settled`; one it is sending, for its refusal.
      if (card.phase === 'sending') card.ending = message;
      else if (['waiting', 'claimed', 'gone'].includes(card.phase)) {
        endCard(message.id, t('phone-ended', { why: ending(message), time: hhmm() }));
      }
      break;
    }
    case 'accepted':
      setPhase(message.id, 'accepted', t('phone-sending'));
      break;
    case 'settled': {
      const card = state.cards.get(message.id);
      if (!card) break;
      if (card.phase === 'accepted') {
        endCard(message.id, message.used ? t('phone-sent', { time: hhmm() }) : t('phone-ended', { why: ending(message.instead), time: hhmm() }), message.used ? 'sent' : 'lost');
      } else if (message.used) {
        endCard(message.id, t('phone-ended', { why: t('phone-answered-on', { device: shown(message.device) }), time: hhmm() }));
      } else if (card.phase === 'claimed' || card.phase === 'gone') {
        endCard(message.id, t('phone-ended', { why: ending(message.instead), time: hhmm() }));
      }
      break;
    }
    case 'refused':
      if (message.id) refused(message.id, message.reason, message.message);
      else if (message.reason === 'not-paired') notPaired();
      break;
    case 'revoked':
      notPaired();
      break;
    default:
      passkey.receive(message);
      break;
  }
}

/**
 * What the desk said became of a request this phone did not settle (docs/remote.md, "The device's
 * socket"): `answered-elsewhere` (on the desk, or on the paired device named), `expired` (an
 * answer rule's deadline), `withdrawn` or `agent-gone` (the agent), or anything else.
 */
function ending(why) {
  switch (why && why.reason) {
    case 'answered-elsewhere': return why.device ? t('phone-answered-on', { device: shown(why.device) }) : t('phone-answered-on-desk');
    case 'expired': return t('phone-expired');
    case 'withdrawn':
    case 'agent-gone': return t('phone-withdrawn');
    default: return t('phone-no-longer-waiting');
  }
}

function notPaired() {
  if (state.confirming) return; // The desk has not confirmed yet: the socket keeps trying.
  state.stopped = true;
  statusLine(t('phone-not-paired'), 'warn');
  main().replaceChildren(h('section', { class: 'card' }, h('h2', {}, t('phone-not-paired-title')),
    h('p', {}, t('phone-not-paired-text'))));
}

function refused(id, reason, text) {
  const card = state.cards.get(id);
  if (!card) return;
  if (reason === 'not-pending') {
    // Its `withdrawn` may come after this refusal: the card waits for it.
    if (card.ending) endCard(id, t('phone-ended', { why: ending(card.ending), time: hhmm() }), 'lost');
    else setPhase(id, 'gone', t('phone-gone'));
  } else if (reason === 'not-paired') {
    notPaired();
  } else {
    card.phase = 'waiting';
    setNote(card, t('phone-not-sent', { reason: text || reason }), 'error');
    // A button the phone may never use (data-locked: a standing option, an allow without a passkey) stays off.
    for (const el of card.node.querySelectorAll('button:not([data-locked]), input, textarea')) el.disabled = false;
  }
}

// --- the list of requests ---

function showRequests() {
  main().replaceChildren(h('p', { id: 'empty', class: 'muted empty' }, t('phone-nothing-waiting')),
    h('div', { id: 'requests', class: 'requests' }));
  state.cards.clear();
}

function updateEmpty() {
  const empty = document.getElementById('empty');
  if (empty) empty.hidden = state.cards.size > 0;
}

function addCard(wire) {
  const list = document.getElementById('requests');
  if (!list) return;
  const old = state.cards.get(wire.id);
  if (old) old.node.remove();
  const card = { wire, phase: 'waiting', node: null, forms: [] };
  card.node = renderCard(card);
  state.cards.set(wire.id, card);
  // Newest on top.
  list.prepend(card.node);
  updateEmpty();
}

function setNote(card, text, kind) {
  const note = card.node.querySelector('.note');
  note.textContent = text;
  note.className = `note ${kind || ''}`;
  note.hidden = !text;
}

function setPhase(id, phase, text) {
  const card = state.cards.get(id);
  if (!card) return;
  card.phase = phase;
  setNote(card, text, 'pending');
}

function endCard(id, text, kind = 'ended') {
  const card = state.cards.get(id);
  if (!card) return;
  card.phase = 'ended';
  card.node.classList.add('ended');
  for (const el of card.node.querySelectorAll('button, input, textarea')) el.disabled = true;
  const close = h('button', { type: 'button', class: 'button small close' }, t('phone-remove'));
  close.addEventListener('click', () => { card.node.remove(); state.cards.delete(id); updateEmpty(); });
  close.disabled = false;
  setNote(card, text, kind);
  card.node.querySelector('.note').append(' ', close);
  tickCountdowns();
}

// --- deadlines ---

/**
 * A card's countdown: the time left until the desk decides the request without the person (an
 * answer rule's deadline, `deadline` in the request, milliseconds on the desk's clock), counted on
 * this phone's clock; "Expired" once it ran out. Only shown: the desk decides when the time is up,
 * and refuses an answer that comes after it.
 */
function countdown() {
  return h('span', { class: 'countdown', role: 'timer', hidden: true });
}

/** `ms` as 4:05 or 1:02:05, rounded up to the second. */
function timeLeft(ms) {
  const total = Math.ceil(ms / 1000);
  const two = (n) => String(n).padStart(2, '0');
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  return hours ? `${hours}:${two(minutes)}:${two(total % 60)}` : `${minutes}:${two(total % 60)}`;
}

/** Sets every card's countdown, and ticks again on the next second while any runs. */
function tickCountdowns() {
  const now = Date.now();
  let running = false;
  for (const card of state.cards.values()) {
    const node = card.node.querySelector('.countdown');
    if (!node) continue;
    const at = card.phase === 'ended' ? null : card.wire.deadline;
    node.hidden = typeof at !== 'number';
    if (node.hidden) continue;
    const left = at - now;
    node.textContent = left > 0 ? t('phone-expires-in', { left: timeLeft(left) }) : t('phone-expired');
    node.classList.toggle('expired', left <= 0);
    running ||= left > 0;
  }
  clearTimeout(state.ticking);
  state.ticking = running ? setTimeout(tickCountdowns, 1000 - (now % 1000)) : null;
}

function renderCard(card) {
  if (card.wire.risk && card.wire.risk.class === 'permission-prompt') return passkey.card(card);
  const view = card.wire.view || {};
  const when = view.askedAt ? hhmm(new Date(view.askedAt)) : '';
  const head = h('div', { class: 'card-head' },
    h('span', { class: 'who' }, view.who || (card.wire.agent && card.wire.agent.id) || t('phone-an-agent')),
    view.project ? h('span', { class: 'project' }, view.project) : null,
    view.session ? h('span', { class: 'session' }, view.session) : null,
    h('span', { class: 'when' }, when), countdown());
  const questions = (view.questions || []).map(form);
  card.forms = questions;
  const send = h('button', { type: 'button', class: 'button primary big send' }, t('phone-send'));
  const dismiss = h('button', { type: 'button', class: 'button big dismiss' }, t('phone-dismiss'));
  send.addEventListener('click', () => submitCard(card));
  dismiss.addEventListener('click', () => answer(card, null));
  const onlyPlan = questions.length === 1 && questions[0].plan;
  return h('article', { class: 'card request', 'data-id': card.wire.id },
    head, questions.map((f) => f.node),
    h('div', { class: 'actions' }, onlyPlan ? null : send, dismiss),
    h('p', { class: 'note', role: 'status', hidden: true }));
}

/** A question's form: a plan under review, or an ordinary question. */
function form(q) {
  return q.planReview ? planForm(q) : questionForm(q);
}

/**
 * Pictures the person answers with: picked with "Add a picture" (a file input taking images, which
 * on a phone offers the camera) or pasted into `box`. They go in the signed answer as the phone has
 * them (`images: [{ mime, data }]`): the desk alone judges them, re-encoding each or refusing the
 * answer with the limit named, and this page shows none of their bytes, only each one's name and
 * size with Remove. `onChange` is called when one comes or goes. Returns { node, images(), count(), clear() }.
 */
function answerPictures(box, onChange) {
  let pictures = [];
  const input = h('input', { type: 'file', accept: 'image/*', multiple: true, class: 'picture-input', hidden: true });
  const add = h('button', { type: 'button', class: 'button small add-picture' }, t('phone-picture-add'));
  const list = h('ul', { class: 'pictures' });
  const problem = h('p', { class: 'error picture-problem', role: 'alert', hidden: true });
  add.addEventListener('click', () => input.click());
  function render() {
    list.replaceChildren(...pictures.map((picture) => {
      const remove = h('button', { type: 'button', class: 'button small picture-remove' }, t('phone-picture-remove'));
      remove.addEventListener('click', () => { pictures = pictures.filter((p) => p !== picture); render(); onChange(); });
      return h('li', { class: 'picture' }, h('span', { class: 'picture-name' }, picture.label), remove);
    }));
  }
  // Pastes and picks are taken one after another, so pictures are listed in the order given even
  // when a large file takes longer to read than a small one after it.
  let taking = Promise.resolve();
  function take(files) {
    taking = taking.then(() => takeNow(files)).catch(() => {});
  }
  async function takeNow(files) {
    problem.hidden = true;
    for (const file of files) {
      try {
        const data = b64(await file.arrayBuffer());
        const kib = Math.max(1, Math.round(file.size / 1024));
        const label = file.name ? t('phone-picture-named', { name: file.name, kib }) : t('phone-picture-unnamed', { kib });
        pictures.push({ label, mime: file.type || undefined, data });
      } catch {
        problem.textContent = t('phone-picture-unreadable');
        problem.hidden = false;
      }
    }
    render();
    onChange();
  }
  input.addEventListener('change', () => { const files = [...input.files]; input.value = ''; take(files); });
  box.addEventListener('paste', (event) => {
    const files = event.clipboardData ? [...event.clipboardData.files] : [];
    // Text pastes as usual; only files are taken as pictures.
    if (!files.length) return;
    event.preventDefault();
    take(files);
  });
  return {
    node: h('div', { class: 'answer-pictures' }, add, input, list, problem),
    images: () => pictures.map(({ mime, data }) => ({ mime, data })),
    count: () => pictures.length,
    clear() { pictures = []; problem.hidden = true; render(); },
  };
}

/** `item` with the pictures of `pictures`, when there are any. */
function withPictures(item, pictures) {
  return pictures.count() ? { ...item, images: pictures.images() } : item;
}

/** One ordinary question: options (one or several), the Other text and its pictures, Skip. */
function questionForm(q) {
  const chosen = new Set();
  let skipped = false;
  const other = h('textarea', { class: 'other', rows: '2', placeholder: t(q.options.length ? 'phone-other' : 'phone-your-answer'), 'aria-label': tAttr('phone-other', 'aria-label') });
  const options = q.options.map((o) => {
    const button = h('button', { type: 'button', class: `option${o.recommended ? ' recommended' : ''}`, 'aria-pressed': 'false', 'data-label': o.label },
      h('span', { class: 'option-label' }, displayLabel(o.label)),
      o.recommended ? h('span', { class: 'badge' }, t('phone-recommended')) : null,
      o.description ? h('span', { class: 'option-desc' }, o.description) : null);
    button.addEventListener('click', () => {
      if (q.multiSelect) {
        if (chosen.has(o.label)) chosen.delete(o.label); else chosen.add(o.label);
      } else {
        chosen.clear();
        chosen.add(o.label);
        other.value = '';
        pictures.clear();
      }
      skipped = false;
      refresh();
    });
    return { o, button };
  });
  other.addEventListener('input', () => {
    // Single-select: typed text replaces the choice (protocol 1).
    if (!q.multiSelect && other.value) chosen.clear();
    skipped = false;
    refresh();
  });
  // A picture is Other's as typed text is.
  const pictures = answerPictures(other, () => {
    if (!q.multiSelect && pictures.count()) chosen.clear();
    if (pictures.count()) skipped = false;
    refresh();
  });
  const skip = h('button', { type: 'button', class: 'button small skip', 'aria-pressed': 'false' }, t('phone-skip'));
  skip.addEventListener('click', () => { skipped = !skipped; if (skipped) { chosen.clear(); other.value = ''; pictures.clear(); } refresh(); });
  function refresh() {
    for (const { o, button } of options) button.setAttribute('aria-pressed', String(chosen.has(o.label)));
    skip.setAttribute('aria-pressed', String(skipped));
  }
  const node = h('section', { class: 'question', 'data-question': q.id },
    q.header ? h('p', { class: 'header' }, q.header) : null,
    h('h2', { class: 'question-text' }, q.question),
    detail(q),
    q.multiSelect ? h('p', { class: 'muted hint' }, t('phone-choose-any')) : null,
    h('div', { class: 'options' }, options.map((x) => x.button)),
    other, pictures.node, skip);
  return {
    node,
    answer() {
      const custom = other.value.trim();
      if (skipped) return { id: q.id, selected: [] };
      const selected = q.options.map((o) => o.label).filter((l) => chosen.has(l));
      const own = custom || pictures.count();
      const item = { id: q.id, selected: own && !q.multiSelect ? [] : selected };
      if (custom) item.custom = custom;
      return withPictures(item, pictures);
    },
  };
}

/**
 * A plan under review: the plan as the desk rendered it, Approve, and feedback. Tapping a block of
 * the plan opens a comment on it; comments go to the desk with the answer, which quotes each one's
 * block in the feedback as the desk's dialog does (askdesk-view's plan_thread::review).
 */
function planForm(q) {
  const approve = q.intent.approve;
  const feedback = h('textarea', { class: 'feedback', rows: '3', placeholder: t('phone-feedback'), 'aria-label': tAttr('phone-feedback', 'aria-label') });
  const approveButton = h('button', { type: 'button', class: 'button primary big approve' }, `✓ ${displayLabel(approve)}`);
  const sendFeedback = h('button', { type: 'button', class: 'button big send-feedback' }, t('phone-send-feedback'));
  const pictures = answerPictures(feedback, () => {});
  const plan = detail(q);
  const revised = revisionOf(q, plan);
  /** Comment editors by block key, in the order they were opened. */
  const comments = new Map();
  const list = h('div', { class: 'comments' });
  const paths = new Map((q.blocks || []).map((b) => [b.key, b.path]));
  if (plan) {
    plan.classList.add('commentable');
    plan.addEventListener('click', (event) => {
      if (event.target.closest('a')) return;
      const block = event.target.closest('[data-block]');
      if (!block || !plan.contains(block) || block.closest('.request.ended')) return;
      const key = block.dataset.block;
      if (!comments.has(key)) {
        const text = h('textarea', { class: 'comment-text', rows: '2', 'data-block': key, 'aria-label': tAttr('phone-comment-on', 'aria-label', { block: paths.get(key) || key }) });
        const remove = h('button', { type: 'button', class: 'button small' }, t('phone-remove'));
        const editor = h('div', { class: 'comment' }, h('p', { class: 'comment-on' }, t('phone-comment-on', { block: paths.get(key) || key })), text, remove);
        remove.addEventListener('click', () => { editor.remove(); comments.delete(key); block.classList.remove('commented'); });
        comments.set(key, text);
        block.classList.add('commented');
        list.append(editor);
      }
      comments.get(key).focus();
    });
  }
  let choice = null;
  const node = h('section', { class: 'question plan-review', 'data-question': q.id },
    q.header ? h('p', { class: 'header' }, q.header) : null,
    h('h2', { class: 'question-text' }, q.question),
    revised,
    plan,
    plan ? h('p', { class: 'muted hint' }, t('phone-tap-to-comment')) : null,
    list,
    h('div', { class: 'plan-actions' }, approveButton, feedback, pictures.node, sendFeedback));
  const written = () => [...comments].map(([block, text]) => ({ block, text: text.value.trim() })).filter((c) => c.text);
  const form = {
    node,
    plan: true,
    answer() {
      if (choice === 'approve') return { id: q.id, selected: [approve] };
      const custom = feedback.value.trim();
      return withPictures(custom ? { id: q.id, selected: [], custom } : { id: q.id, selected: [] }, pictures);
    },
    comments: () => (choice === 'approve' ? [] : written()),
  };
  const card = () => state.cards.get(node.closest('.request').dataset.id);
  approveButton.addEventListener('click', () => {
    // Comments are feedback: they go back with "Send feedback", never with an approval.
    if (written().length) {
      setNote(card(), t('phone-comments-are-feedback'), 'error');
      return;
    }
    if (pictures.count()) {
      setNote(card(), t('phone-picture-not-with-approve'), 'error');
      return;
    }
    choice = 'approve';
    submitCard(card());
  });
  sendFeedback.addEventListener('click', () => {
    if (!feedback.value.trim() && !written().length && !pictures.count()) { feedback.focus(); return; }
    choice = 'feedback';
    submitCard(card());
  });
  return form;
}

/**
 * A revised plan's changes since the version before, as the desk's dialog shows them: the line
 * saying which version this is with the +/− badge, the added, changed and moved blocks marked in
 * `plan`, a changed block's text word by word (removed words struck through, added ones marked),
 * and the removed blocks where they stood. All of it from the desk's own diff (askdesk-view's RevisionView), set as text.
 */
function revisionOf(q, plan) {
  const revision = q.revision;
  if (!revision || !plan) return null;
  const changes = revision.changes;
  const block = (key) => plan.querySelector(`[data-block="${CSS.escape(key)}"]`);
  for (const mark of changes.marks) {
    const el = block(mark.key);
    if (!el) continue;
    el.classList.add(`diff-${mark.status}`);
    if (!mark.words) continue;
    // The block's own text read word by word in its place (a nested list stays), as at the desk.
    const words = h('span', { class: 'word-diff' }, mark.words.map((run) => {
      const text = run.code ? h('code', {}, run.text) : run.text;
      return run.op === 'delete' ? h('del', {}, text) : run.op === 'insert' ? h('ins', {}, text) : text;
    }));
    if (el.tagName === 'TR') {
      el.after(h('tr', {}, h('td', { colspan: String(Math.max(1, el.children.length)) }, words)));
      continue;
    }
    const own = [...el.childNodes].filter((n) => !(n instanceof Element && n.matches('ul, ol')));
    const after = own.length ? own[own.length - 1].nextSibling : el.firstChild;
    own.forEach((n) => n.remove());
    el.insertBefore(words, after);
  }
  for (const gone of changes.removedBlocks) {
    const before = gone.before ? block(gone.before) : null;
    const tag = before && before.tagName === 'LI' ? 'li' : 'div';
    const ghost = h(tag, { class: 'diff-removed' }, gone.text);
    // Never inside code or a table: before the block that holds the line or row.
    const holder = before && (before.closest('pre') || before.closest('table'));
    if (holder) holder.before(ghost);
    else if (before) before.before(ghost);
    else plan.append(ghost);
  }
  const since = revision.previous.length ? revision.previous[revision.previous.length - 1].version : revision.version - 1;
  const changed = changes.marks.length + changes.removedBlocks.length > 0;
  return h('p', { class: 'revision' }, t('phone-version', { version: revision.version }),
    t(changed ? 'phone-changes-since' : 'phone-no-changes-since', { since }),
    changed ? h('span', { class: 'plus' }, `+${changes.plus}`) : null, changed ? ' ' : null,
    changed ? h('span', { class: 'minus' }, `−${changes.minus}`) : null);
}

function submitCard(card) {
  const comments = card.forms.flatMap((f) => (f.comments ? f.comments() : []));
  answer(card, { answers: card.forms.map((f) => f.answer()) }, comments);
}

/** The detail the desk rendered and sanitized (askdesk-view): the only HTML this page inserts. */
function detail(q) {
  if (!q.detailHtml) return null;
  const node = h('div', { class: 'md detail' });
  node.innerHTML = q.detailHtml;
  return node;
}

// --- answering ---

async function requestDigest(wire) {
  const value = { agent: wire.agent ? wire.agent.id : null, id: wire.id, key: wire.key, kind: 'askdesk/request', questions: wire.questions, v: 1 };
  return b64u(await sha256(enc.encode(canonical(value))));
}

/**
 * Signs `value` (`null` dismisses the batch) and any comments on its plan, and sends them; with
 * `withPasskey`, the passkey's assertion over that exact answer goes with them.
 */
async function answer(card, value, comments = [], withPasskey = null) {
  if (!state.socket || state.socket.readyState !== WebSocket.OPEN) {
    setNote(card, t('phone-not-sent-unreachable'), 'error');
    return;
  }
  card.phase = 'sending';
  for (const el of card.node.querySelectorAll('button, input, textarea')) el.disabled = true;
  setNote(card, t('phone-sending'), 'pending');
  const digest = await requestDigest(card.wire);
  const nonce = b64u(crypto.getRandomValues(new Uint8Array(16)));
  const signed = { answer: value, digest, kind: 'askdesk/answer', nonce, v: 1 };
  if (comments.length) signed.comments = comments;
  const signature = await sign(state.device.privateKey, signed);
  let assertion;
  try {
    assertion = withPasskey ? await withPasskey({ nonce, answer: value, comments: signed.comments }) : undefined;
  } catch (e) {
    refused(card.wire.id, 'passkey', e.message);
    return;
  }
  state.socket.send(JSON.stringify({ type: 'answer', id: card.wire.id, nonce, answer: value, comments: signed.comments, digest, signature, passkey: assertion }));
}

const passkey = passkeys({
  h, b64u, unb64u, setNote, displayLabel, hhmm, answer, form, countdown,
  send: (message) => state.socket && state.socket.send(JSON.stringify(message)),
});

// --- start ---

async function start() {
  // The desk's words in the desk's language (docs/remote.md, "The phone's language").
  const catalogue = await fetch('/catalogue');
  if (catalogue.ok) useCatalogue(await catalogue.json());
  translate();
  if ('serviceWorker' in navigator) navigator.serviceWorker.register('/sw.js').catch(() => {});
  const fragment = location.hash.match(/^#v1\.([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]+)$/);
  if (location.pathname === '/pair' && fragment) {
    pairPage(unb64u(fragment[1]));
    return;
  }
  state.device = await loadDevice().catch(() => null);
  if (!state.device) {
    statusLine(t('phone-not-paired'), 'warn');
    main().replaceChildren(h('section', { class: 'card' }, h('h2', {}, t('phone-unpaired-title')),
      h('p', {}, t('phone-unpaired-text')),
      h('p', {}, h('a', { href: '/ca' }, t('phone-install-authority')))));
    return;
  }
  statusLine(t('phone-connecting'));
  connect();
}

start().catch((e) => statusLine(shown(e.message), 'warn'));
