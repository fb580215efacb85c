// askdesk UI entry: the queue of waiting requests, the request view, keyboard handling, links, History, Rules, Connect, Devices.
import { api, available, listen } from './bridge.js';
import { h, waited, metaText, displayLabel, onDay } from './dom.js';
import { plainQuestion } from './question.js';
import { planQuestion } from './plan.js';
import { renderHistory } from './history.js';
import { previewRule } from './rule_preview.js';
import { renderRules, showRulesNotice, showSuggestions } from './rules.js';
import { renderConnect } from './connect.js';
import { renderDevices } from './devices.js';
import { showChoices, wireChoices, showLanguages, wireLanguage } from './choices.js';
import { t, tAttr, locale, useCatalogue, translate } from './l10n.js';

const $ = (id) => document.getElementById(id);
const els = {
  queueList: $('queue-list'), queueCount: $('queue-count'), navQueue: $('nav-queue'), navHistory: $('nav-history'),
  dnd: $('dnd'), empty: $('view-empty'), request: $('view-request'), history: $('view-history'),
  elsewhere: $('view-elsewhere'), elsewhereWhere: $('elsewhere-where'), elsewhereWho: $('elsewhere-who'),
  asker: $('asker'), form: $('request-form'), submit: $('submit'), dismiss: $('dismiss'), always: $('always'),
  closeEnded: $('close-ended'),
  historyList: $('history-list'), historyAgent: $('history-agent'), historyOutcome: $('history-outcome'),
  historyAnswerer: $('history-answerer'), historySearch: $('history-search'),
  navRules: $('nav-rules'), rules: $('view-rules'), rulesPath: $('rules-path'), rulesError: $('rules-error'),
  rulesList: $('rules-list'), rulesNotice: $('rules-notice'), ruleNotes: $('rule-notes'),
  navConnect: $('nav-connect'), connect: $('view-connect'),
  navDevices: $('nav-devices'), devices: $('view-devices'),
  queueToggle: $('queue-toggle'), toggleCount: $('queue-toggle-count'), keysHint: $('keys-hint'),
  toast: $('toast'), confirm: $('confirm'), confirmUrl: $('confirm-url'), confirmOk: $('confirm-ok'), confirmCancel: $('confirm-cancel'),
};

const state = {
  queue: [],            // RequestView[] from the backend, oldest first
  current: null,        // the request id shown
  mode: 'queue',        // 'queue' | 'history' | 'rules' | 'connect' | 'devices'
  firstRun: false,      // Connect was opened for the first run, not by the person
  forms: new Map(),     // request id -> { node, questions } (kept so switching keeps what was typed)
  busy: false,
  settledHere: new Set(), // requests this page answered or dismissed: their leaving is the human's doing
  swapped: false,         // the request shown left on its own (withdrawn, answered elsewhere) and another took its place
  left: null,             // the request that last left the screen
  elsewhereUntil: 0,      // until then, "Answered on <device>" stands where the request that left was
};

// How long "Answered on <device>" stands in place of a request another device of the person answered.
const ELSEWHERE_MS = 2500;
let elsewhereTimer = null;

// After the request on screen is swapped for another under the human's hands, keys are not taken
// for this long: a digit, Space or Ctrl+Enter meant for the request that left must not answer the
// one that came.
const SWAP_GUARD_MS = 1000;
let guardUntil = 0;

// ----- queue -----

// Each refresh asks for the queue; answers can come back out of order (one that reads the journal
// for past answers takes longer), so only the newest call's answer is drawn: an older one would
// bring back requests that have gone since. A superseded call waits for the newest one, so whoever
// awaits a refresh sees the queue drawn.
let queueAsked = 0;
let newestRefresh = Promise.resolve();
function refreshQueue(reading = api.queue()) {
  const asked = ++queueAsked;
  newestRefresh = (async () => {
    const queue = await reading;
    if (asked !== queueAsked) return newestRefresh;
    showQueue(queue);
  })();
  return newestRefresh;
}

function showQueue(queue) {
  state.queue = queue;
  if (state.queue.length) els.empty.classList.remove('sent');
  const ids = new Set(state.queue.map((v) => v.request));
  for (const id of [...state.forms.keys()]) if (!ids.has(id)) state.forms.delete(id);
  if (!ids.has(state.current)) {
    const left = state.current;
    if (left !== null) state.left = left;
    state.current = state.queue.length ? state.queue[0].request : null;
    // (A page that starts on a request that left meanwhile has had nothing under the human's hands.)
    const started = document.body.dataset.ready === 'true';
    if (started && left !== null && state.current !== null && state.mode === 'queue' && !state.settledHere.has(left)) {
      state.swapped = true;
      guardUntil = performance.now() + SWAP_GUARD_MS;
    }
  }
  // The first run's Connect view stands in for an empty window: a question takes its place.
  if (state.mode === 'connect' && state.firstRun && state.queue.length) {
    state.mode = 'queue';
    state.firstRun = false;
  }
  // Forgotten once gone (and after the check above, which asks about the one that just went).
  for (const id of [...state.settledHere]) if (!ids.has(id)) state.settledHere.delete(id);
  renderSidebar();
  if (state.mode === 'queue') renderMain();
}

function renderSidebar() {
  // Ended requests (the agent withdrew the question or went) stay listed until closed, but wait for nothing.
  const waiting = state.queue.filter((v) => !v.ended).length;
  els.queueCount.textContent = String(waiting);
  els.queueCount.classList.toggle('zero', waiting === 0);
  // The folded queue's button (a narrow window) says how many wait, too.
  els.toggleCount.textContent = String(waiting);
  els.toggleCount.hidden = waiting === 0;
  els.queueToggle.setAttribute('aria-label', t('queue-toggle-waiting', { waiting }));
  els.queueList.replaceChildren(...state.queue.map((view) => {
    const first = view.questions[0];
    // What tells parallel sessions of one agent apart: the project folder and the session.
    const where = [view.project, view.session && `#${view.session}`].filter(Boolean).join(' · ');
    const item = h('li', {
      class: `queue-item${view.request === state.current && state.mode === 'queue' ? ' active' : ''}${view.ended ? ' ended' : ''}`,
      role: 'option', tabindex: '0', dataset: { request: String(view.request) },
      'aria-selected': String(view.request === state.current),
    },
      h('span', { class: 'avatar', 'aria-hidden': 'true' }, initial(view.who)),
      h('span', { class: 'queue-text' },
        h('span', { class: 'queue-who', title: view.who, dir: 'auto' }, view.who),
        where ? h('span', { class: 'queue-where', title: where, dir: 'auto' }, where) : null,
        h('span', { class: 'queue-what', dir: 'auto' }, first.header || first.question)),
      h('span', { class: 'queue-meta' },
        h('span', { class: 'queue-age', dataset: { since: String(view.askedAt) } }, waited(view.askedAt)),
        view.ended ? h('span', { class: 'queue-ended', title: view.ended.text }, t('queue-ended')) : null,
        !view.ended && view.questions.length > 1
          ? h('span', { class: 'queue-n', title: tAttr('queue-progress', 'title') }, progressText(view)) : null,
        view.deadline ? queueDeadline(view.deadline) : null));
    const open = () => { state.current = view.request; state.mode = 'queue'; renderSidebar(); renderMain(); };
    item.addEventListener('click', open);
    item.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); open(); } });
    return item;
  }));
  els.navQueue.classList.toggle('active', state.mode === 'queue');
  els.navHistory.classList.toggle('active', state.mode === 'history');
  els.navRules.classList.toggle('active', state.mode === 'rules');
  els.navConnect.classList.toggle('active', state.mode === 'connect');
  els.navDevices.classList.toggle('active', state.mode === 'devices');
}

// A batch's progress: the questions answered or skipped so far, of all (from the form when it is
// built, else from the draft a dropped window left).
function progressText(view) {
  const form = state.forms.get(view.request);
  const done = form
    ? form.questions.filter((c) => c.answer()).length
    : (view.draft && Array.isArray(view.draft.questions) ? view.draft.questions : [])
      .filter((d) => d && (d.skipped || (d.checked || []).length || (typeof d.text === 'string' && d.text.trim()))).length;
  return `${done}/${view.questions.length}`;
}

// A rule's deadline in the queue row: the time left, ticking with the header's, or "held".
function queueDeadline(deadline) {
  const held = deadline.held !== null && deadline.held !== undefined;
  return h('span', { class: `queue-rule${held ? ' held' : ''}`, title: t('queue-rule-title', { rule: deadline.rule, action: deadline.action }) },
    held ? t('queue-rule-held') : h('span', { class: 'rule-left', dataset: { until: String(deadline.at) } }, timeLeft(deadline.at)));
}

// After each change to a form: its row's progress, and whether the choice differs from the rule's.
function changed(request) {
  const view = state.queue.find((v) => v.request === request);
  if (!view) return;
  const count = els.queueList.querySelector(`.queue-item[data-request="${request}"] .queue-n`);
  if (count) count.textContent = progressText(view);
  if (request === state.current) showDiffers(view);
}

// When the person has chosen something else than what the rule's deadline will answer, say so:
// the rule's answer is not theirs, and it goes out if they walk away.
function showDiffers(view) {
  const note = els.asker.querySelector('.rule-differs');
  const form = state.forms.get(view.request);
  if (!note) return;
  const rule = view.deadline && view.deadline.answer;
  const mine = form ? form.questions.map((c) => c.answer()) : [];
  const words = (item) => (item.custom ? `“${item.custom}”` : item.selected.map((l) => `“${displayLabel(l)}”`).join(', ')) || t('rule-differs-nothing');
  const differing = rule ? view.questions.map((q, i) => {
    const theirs = rule.answers.find((a) => a.id === q.id);
    const ours = mine[i];
    const same = (a, b) => JSON.stringify([[...a.selected].sort(), a.custom || '']) === JSON.stringify([[...b.selected].sort(), b.custom || '']);
    return theirs && ours && !same(theirs, ours) ? { q, theirs, ours } : null;
  }).filter(Boolean) : [];
  note.hidden = differing.length === 0;
  if (!differing.length) return;
  const { q, theirs, ours } = differing[0];
  const picked = { ours: words(ours), theirs: words(theirs) };
  note.textContent = (view.questions.length > 1
    ? t('rule-differs-in', { ...picked, question: q.header || q.question }) : t('rule-differs', picked)) +
    (differing.length > 1 ? ` ${t('rule-differs-more', { more: differing.length - 1 })}` : '');
  note.title = note.textContent;
}

function initial(name) {
  return (name.trim()[0] || '?').toUpperCase();
}

// ----- main view -----

// The view last reported to the backend, which opens a rebuilt window on it (the first is always
// reported: the last page may have left another).
let reportedMode = null;

function renderMain() {
  if (state.mode !== reportedMode) {
    reportedMode = state.mode;
    api.viewed(state.mode).catch(() => {});
  }
  els.history.hidden = state.mode !== 'history';
  els.rules.hidden = state.mode !== 'rules';
  els.connect.hidden = state.mode !== 'connect';
  els.devices.hidden = state.mode !== 'devices';
  // Where the request another device answered was, that says so for a moment; the next request
  // (if any) comes after it, so no key meant for the one that left acts on it.
  const elsewhere = state.mode === 'queue' && performance.now() < state.elsewhereUntil;
  els.elsewhere.hidden = !elsewhere;
  const view = state.mode === 'queue' && !elsewhere ? state.queue.find((v) => v.request === state.current) : null;
  els.empty.hidden = state.mode !== 'queue' || elsewhere || Boolean(view);
  els.request.hidden = !view;
  if (!view) {
    els.form.replaceChildren();
    els.asker.replaceChildren();
    syncCountdown();
    // The card that stands in keeps the focus the request view had (the next request, after it,
    // still counts as swapped in).
    if (elsewhere) {
      const active = document.activeElement;
      if (!active || active === document.body || !active.isConnected || els.request.contains(active)) {
        els.elsewhere.focus({ preventScroll: true });
      }
    } else if (state.mode === 'queue') placeFocus(null);
    return;
  }
  renderAsker(view);
  // A tool prompt with nothing to narrow a rule to is offered no rule (the backend decides).
  els.always.hidden = !view.offersRule || Boolean(view.ended);
  // An ended request can only be read, copied from and closed.
  els.request.classList.toggle('ended', Boolean(view.ended));
  els.submit.hidden = els.dismiss.hidden = Boolean(view.ended);
  els.closeEnded.hidden = !view.ended;
  syncCountdown();
  const form = formFor(view);
  form.questions.forEach((c, i) => { if (c.update) c.update(view.questions[i]); });
  if (els.form.firstChild !== form.node) els.form.replaceChildren(form.node);
  if (view.ended) {
    readOnly(form.node);
    if (els.request.contains(document.activeElement) && !isTextBox(document.activeElement)) els.closeEnded.focus({ preventScroll: true });
    reportShown(view.request);
    return;
  }
  placeFocus(form);
  showDiffers(view);
  els.request.classList.toggle('has-plan', view.questions.some((q) => q.planReview));
  // A single-select plan that is the whole request sends with its own button (plan.js): no second Submit.
  els.request.classList.toggle('plan-sends-itself', view.questions.length === 1 && view.questions[0].planReview && !view.questions[0].multiSelect);
  els.keysHint.textContent = keysHint(view, form);
  reportShown(view.request);
}

// The focus follows the request shown: a request that comes into view puts it on its first
// question's first control (a plan: the plan itself), unless the human is typing in a text box
// that is still there; with nothing left to answer it goes to the empty view, not to <body>.
let focusedForm = null;
// A request that replaced the one being answered (it left on its own) gets the focus on the
// request view itself, not on a control: the human's next key was meant for the one that left.
function placeFocus(form) {
  const swapped = state.swapped;
  state.swapped = false;
  if (form === focusedForm) return;
  focusedForm = form;
  const active = document.activeElement;
  const live = active && active !== document.body && active.isConnected;
  if (live && (isTextBox(active) || active.closest('.modal'))) return;
  if (!form) {
    if (!live || els.request.contains(active)) els.empty.focus({ preventScroll: true });
    return;
  }
  if (swapped && (!live || els.request.contains(active))) {
    els.request.focus({ preventScroll: true });
    return;
  }
  form.first.focusStart();
}

// The footer's keys, exactly those that work for the request shown. A plan's Enter comments on its
// block, so a request with a plan says Ctrl+Enter, which sends from anywhere.
function keysHint(view, form) {
  const own = form.questions.flatMap((c) => c.keys || []);
  if (!own.length) return t('keys-hint');
  // A plan's digits are its options; a question's, its options and Other.
  const digits = Math.min(9, Math.max(...view.questions.map((q) =>
    q.planReview ? q.options.length : q.options.length ? q.options.length + 1 : 0)));
  const pick = digits > 1 ? [t('keys-pick', { digits })] : digits === 1 ? [t('keys-pick-one')] : [];
  return [...own, ...pick, t('keys-send'), t('keys-tab'), t('keys-esc')].join(' · ');
}

// What the person typed in a request that ended stays on screen to read and copy: text boxes become
// read-only (still selectable), every other control is disabled.
function readOnly(node) {
  for (const box of node.querySelectorAll('textarea, input:not([type]), input[type="text"]')) box.readOnly = true;
  for (const control of node.querySelectorAll('input[type="radio"], input[type="checkbox"], button, select')) control.disabled = true;
}

function isTextBox(el) {
  return el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement || el.isContentEditable ||
    (el instanceof HTMLInputElement && !['radio', 'checkbox', 'button', 'submit', 'reset'].includes(el.type));
}

// Tells the backend once per request when its dialog has been painted (for measurements).
let reported = null;
function reportShown(request) {
  if (reported === request) return;
  reported = request;
  requestAnimationFrame(() => setTimeout(() => api.shown(request).catch(() => {}), 0));
}

function renderAsker(view) {
  const agent = view.agent;
  const meta = (agent && agent.meta) || {};
  // Every key the agent gave (protocol 5.4: meta says which agent is asking), the usual ones first.
  const keys = [...new Set([...FIRST_META.filter((key) => key in meta), ...Object.keys(meta)])]
    .filter((key) => !LAST_META.includes(key));
  const chips = keys.map((key) => chip(key, metaText(meta, key) ?? 'null', key !== 'model'));
  // Internal identifiers, for telling two processes apart when it matters: last and quiet.
  for (const key of LAST_META.filter((k) => k in meta)) chips.push(chip(key, metaText(meta, key) ?? 'null', true, true));
  if (agent && agent.label && agent.label !== agent.id) chips.push(chip(t('chip-agent-id'), agent.id, true, true));
  els.asker.replaceChildren(
    h('span', { class: 'avatar large', 'aria-hidden': 'true' }, initial(view.who)),
    h('div', { class: 'asker-text' },
      h('div', { class: 'asker-title' },
        h('span', { class: 'asker-name', dir: 'auto' }, view.who),
        h('span', { class: 'asker-verb' }, t(view.ended ? 'asker-asked' : 'asker-asks', { questions: view.questions.length }))),
      h('div', { class: 'chips' }, chips),
      view.deadline && !view.ended ? ruleDeadline(view) : null,
      view.deadline && !view.ended ? h('div', { class: 'rule-differs', role: 'status', hidden: true }) : null,
      view.ended ? h('div', { class: 'ended-note', role: 'status' },
        h('strong', {}, t('ended-said', { said: view.ended.text })),
        ` ${t('ended-note')}`) : null),
    h('div', { class: 'asker-age' },
      h('span', { class: 'age-label' }, t(view.ended ? 'age-asked' : 'age-waiting')),
      h('span', { class: 'age-value queue-age', dataset: { since: String(view.askedAt) } }, waited(view.askedAt))));
}

// A rule acts on this request at `deadline.at` unless the human answers first: said as text, with
// Hold, which stops the rule's clock in the backend (a held request is never answered by the rule)
// until Release.
function ruleDeadline(view) {
  const deadline = view.deadline;
  const held = deadline.held !== null && deadline.held !== undefined;
  const button = h('button', { type: 'button', class: 'button small hold-deadline' }, t(held ? 'deadline-release' : 'deadline-hold'));
  button.addEventListener('click', async () => {
    try {
      await api.holdDeadline(view.request, !held);
    } catch (error) {
      toast(t('deadline-not-held', { error: (error && error.message) || error }), 'warn');
    }
    await refreshQueue();
  });
  const said = { rule: deadline.rule, action: deadline.action };
  const text = held
    ? h('span', { class: 'rule-text' }, `${t('deadline-held-before', said)} `,
      h('span', { class: 'mono' }, timeLeft(Date.now() + deadline.held)), ` ${t('deadline-held-after')}`)
    : h('span', { class: 'rule-text' }, `${t('deadline-will-before', said)} `,
      h('span', { class: 'rule-left mono', dataset: { until: String(deadline.at) } }, timeLeft(deadline.at)),
      ` ${t('deadline-will-after')}`);
  return h('div', { class: `rule-deadline${held ? ' held' : ''}`, role: 'status' }, text, button);
}

function timeLeft(until) {
  const s = Math.max(0, Math.ceil((until - Date.now()) / 1000));
  const two = (n) => String(n).padStart(2, '0');
  const hours = Math.floor(s / 3600);
  return hours ? `${hours}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}` : `${Math.floor(s / 60)}:${two(s % 60)}`;
}

/** The meta keys shown first, in this order; the others follow in the order they came, then these. */
const FIRST_META = ['cwd', 'repo', 'branch', 'model'];
const LAST_META = ['pid'];

// Keys and values are the agent's text: set as text, each isolated for direction, wrapped anywhere.
function chip(kind, text, mono = false, minor = false) {
  return h('span', { class: `chip${minor ? ' minor' : ''}`, title: `${kind}: ${text}` },
    h('span', { class: 'chip-kind' }, kind), h('span', { class: `chip-value${mono ? ' mono' : ''}` }, text));
}

function formFor(view) {
  let form = state.forms.get(view.request);
  if (form) return form;
  const alone = view.questions.length === 1;
  // A page built after the window was dropped finds what the human had chosen and typed in the draft.
  const drafts = new Map((view.draft && Array.isArray(view.draft.questions) ? view.draft.questions : [])
    .filter((d) => d && typeof d.id === 'string').map((d) => [d.id, d]));
  // Restoring a draft is not a change: nothing is sent back until the form is built.
  let built = false;
  const onChange = () => { if (built) { saveDraft(view.request); changed(view.request); } };
  const questions = view.questions.map((q, i) => {
    const draft = drafts.get(q.id) || null;
    return q.planReview
      ? planQuestion(q, i, { alone, submitNow: () => submit(), request: view.request, draft, onChange })
      : plainQuestion(q, i, { request: view.request, draft, onChange });
  });
  built = true;
  const ordered = [...questions.filter((c) => c.node.classList.contains('plan-review')), ...questions.filter((c) => !c.node.classList.contains('plan-review'))];
  form = { node: h('div', { class: 'questions' }, ordered.map((c) => c.node)), questions, first: ordered[0] };
  state.forms.set(view.request, form);
  showMemory(view, form.node);
  showSuggestions(view, form.node);
  return form;
}

// Under each question answered before for the same project with the same text: who answered what
// then, and a button that selects it again (the human still submits). Text only. The past answers
// come with the queue, so the hint is there in the request's first draw and never moves the options.
function showMemory(view, node) {
  view.questions.forEach((q, i) => {
    const found = (view.memory || [])[i];
    const card = !q.planReview && found && node.querySelector(`[data-qid="${CSS.escape(q.id)}"]`);
    if (!card || card.querySelector('.memory-hint')) return;
    const use = h('button', { type: 'button', class: 'link use-again' }, t('use-again'));
    use.addEventListener('click', () => {
      for (const input of card.querySelectorAll('input.option-input')) {
        input.checked = found.selected.includes(input.value);
        input.dispatchEvent(new Event('change'));
      }
    });
    // Who answered what comes from the backend ("Rule “prune” answered Delete them"); the day is local.
    card.querySelector('.q-text').after(h('div', { class: 'memory-hint' },
      h('span', {}, `${found.said} ${onDay(found.answeredAt)}`), ' ', use));
  });
}

// Every change to a form is kept in the backend (once per event, however many fields it touched),
// so the window can be dropped while the request waits and the next page shows the same answer.
const unsaved = new Set();
function saveDraft(request) {
  if (unsaved.has(request)) return;
  unsaved.add(request);
  queueMicrotask(() => {
    unsaved.delete(request);
    const form = state.forms.get(request);
    if (!form) return;
    api.saveDraft(request, { questions: form.questions.map((c) => c.draft()) })
      .catch((error) => toast(t('draft-not-kept', { error: (error && error.message) || error }), 'warn'));
  });
}

// The form of the request shown, when it can still be answered (not one that ended).
function currentForm() {
  const view = state.queue.find((v) => v.request === state.current);
  return state.current === null || (view && view.ended) ? null : state.forms.get(state.current);
}

// The person closes a request that ended: it leaves the queue (what they typed is in History).
async function closeEnded() {
  if (state.current === null) return;
  state.settledHere.add(state.current);
  try { await api.closeEnded(state.current); } catch { /* gone already */ }
  await refreshQueue();
}

// The answer in the current form, checked complete: { request, items }, or null (the human was told why).
async function collectAnswer() {
  const form = currentForm();
  if (!form || state.busy) return null;
  // The request this form answers, even if the queue moves on while a question below is open.
  const request = state.current;
  // A plan review turns its comments into feedback text first (and may ask about them).
  state.busy = true;
  try {
    for (const c of form.questions) {
      if (c.prepare && !(await c.prepare())) return null;
    }
  } catch (error) {
    if (error && error.kind === 'late') {
      toast(t('too-late'), 'warn');
      await refreshQueue();
    } else {
      toast(t('not-sent', { error: (error && error.message) || error }), 'error');
    }
    return null;
  } finally {
    state.busy = false;
  }
  const items = form.questions.map((c) => c.answer());
  const missing = form.questions.filter((_, i) => !items[i]);
  if (missing.length) {
    missing.forEach((c) => c.markMissing());
    missing[0].focus();
    toast(t('answer-missing', { missing: missing.length }),
      'info', { avoid: missing[0].node });
    return null;
  }
  // A plan review's comments go beside the answer: the backend builds its feedback from them.
  const comments = form.questions.flatMap((c) => (c.comments ? c.comments() : []));
  return { request, items, comments };
}

// Sends the answer; `before` opens every message (what was done first, e.g. a rule saved).
async function sendAnswer(request, items, before = '', comments = []) {
  state.busy = true;
  state.settledHere.add(request);
  // A plan review answered with feedback sent feedback, not an answer: said as such.
  const view = state.queue.find((v) => v.request === request);
  const feedback = comments.length > 0 ||
    (view ? items.some((item, i) => view.questions[i] && view.questions[i].planReview && item.custom) : false);
  const sent = t(!feedback ? 'sent-answer' : items.length > 1 ? 'sent-feedback-answers' : 'sent-feedback');
  try {
    await api.submit(request, { answers: items }, comments);
    toast(`${before}${sent}`);
  } catch (error) {
    if (error && error.kind === 'late') toast(`${before}${t('too-late-kept')}`, 'warn');
    else toast(`${before}${t('not-sent', { error: (error && error.message) || error })}`, 'error');
  } finally {
    state.busy = false;
    await refreshQueue();
  }
}

async function submit() {
  const got = await collectAnswer();
  if (got) await sendAnswer(got.request, got.items, '', got.comments);
}

// "Always answer this way here": the rule drafted from this answer is previewed; Save appends it
// to the rules file and submits the answer, Cancel leaves the dialog as it was.
async function alwaysAnswer() {
  const got = await collectAnswer();
  if (!got) return;
  const saved = await previewRule(t('always'),
    () => api.draftRule(got.request, { answers: got.items }), { saveLabel: t('always-save') });
  if (saved) await sendAnswer(got.request, got.items, `${t('rule-saved')} `);
}

async function dismiss() {
  if (state.current === null || state.busy || !currentForm()) return;
  state.busy = true;
  state.settledHere.add(state.current);
  try {
    await api.dismiss(state.current);
    toast(t('dismissed'));
  } catch (error) {
    toast((error && error.message) || String(error), 'warn');
  } finally {
    state.busy = false;
    await refreshQueue();
  }
}

// ----- history -----

// History comes a page at a time, filtered by the backend over the whole journal: the newest
// HISTORY_PAGE entries, and as many more on each "Show more". A page is kept short: every entry
// shown is memory the web process holds while History is open.
const HISTORY_PAGE = 200;
let historyLimit = HISTORY_PAGE;
let historyRead = 0;

// Opens History; with `askedAt` (a note's "Show in History"), scrolled to the entry of the request
// asked then, which is marked until the next reading of History. The filters are cleared so it is there.
async function showHistory(askedAt = null) {
  state.mode = 'history';
  renderSidebar();
  renderMain();
  historyLimit = HISTORY_PAGE;
  if (typeof askedAt !== 'number') return loadHistory();
  for (const filter of [els.historyAgent, els.historyOutcome, els.historyAnswerer, els.historySearch]) filter.value = '';
  await loadHistory();
  const entry = els.historyList.querySelector(`[data-asked~="${askedAt}"]`);
  if (!entry) { toast(t('history-not-yet'), 'warn'); return; }
  entry.classList.add('sought');
  entry.scrollIntoView({ block: 'center' });
}

// Reads the page the filters and the limit ask for; a read overtaken by a newer one is dropped.
async function loadHistory() {
  const read = ++historyRead;
  const query = {
    agent: els.historyAgent.value || null,
    outcome: els.historyOutcome.value || null,
    answerer: els.historyAnswerer.value || null,
    text: els.historySearch.value.trim() || null,
    limit: historyLimit,
  };
  let page;
  try {
    page = await api.history(query);
  } catch (error) {
    toast(t('history-unavailable', { error: (error && error.message) || error }), 'error');
    page = { entries: [], matching: 0, total: 0, agents: [], answerers: [], outcomes: [] };
  }
  if (read !== historyRead) return;
  renderHistory(page, {
    list: els.historyList, agentSelect: els.historyAgent, answererSelect: els.historyAnswerer, outcomeSelect: els.historyOutcome,
    onMore: () => { historyLimit += HISTORY_PAGE; loadHistory(); },
  });
  els.historyList.dataset.loaded = String(read);
}

function filterHistory() {
  historyLimit = HISTORY_PAGE;
  loadHistory();
}

// ----- rules -----

// Opens the rules file in the person's editor (created with a commented example when missing).
async function openRulesFile() {
  try {
    await api.openRulesFile();
    toast(t('rules-file-open'));
  } catch (error) {
    toast(t('not-opened', { error: (error && error.message) || error }), 'error');
  }
}

async function showRules() {
  state.mode = 'rules';
  renderSidebar();
  renderMain();
  await refreshRules();
}

// Reads the rules in force (with their counts while the Rules view is open) and updates the
// sidebar's notice of a broken file. Called again on every `rules-changed`.
let rulesRead = 0;
async function refreshRules() {
  const counts = state.mode === 'rules';
  const read = ++rulesRead;
  let view;
  try {
    view = await api.rules(counts);
  } catch (error) {
    if (counts) toast(t('rules-unavailable', { error: (error && error.message) || error }), 'error');
    return;
  }
  if (read !== rulesRead) return; // a newer read is on its way
  showRulesNotice(els.rulesNotice, view);
  if (state.mode === 'rules') {
    renderRules(view, { path: els.rulesPath, error: els.rulesError, list: els.rulesList, onMode: setRuleMode, onOpen: openRulesFile });
    els.rules.dataset.loaded = 'true';
  }
}

async function setRuleMode(name, mode) {
  try {
    await api.setRuleMode(name, mode);
    toast(t('rule-mode-now', { name, mode }));
  } catch (error) {
    toast(t('not-changed', { error: (error && error.message) || error }), 'error');
  }
  await refreshRules();
}

// ----- what rules did -----

// Each request a rule answered at its deadline leaves a note that stays (in the app, across
// dropped windows) until the person closes it: they may have been away when it happened.
async function refreshNotes() {
  let notes;
  try { notes = await api.notes(); } catch { return; }
  els.ruleNotes.replaceChildren(...notes.map((note) => {
    const close = h('button', { type: 'button', class: 'link note-close', 'aria-label': tAttr('note-close', 'aria-label') }, t('note-close'));
    close.addEventListener('click', () => api.closeNote(note.id).then(refreshNotes, refreshNotes));
    // The exact answer the rule sent (its words for it, like "the recommended option", only when it sent none).
    const said = { rule: note.rule, who: note.who, question: note.question };
    const did = note.answer !== null && note.answer !== undefined
      ? t('note-answered', { ...said, answer: note.answer }) : t('note-acted', { ...said, action: note.action });
    const open = h('button', { type: 'button', class: 'link note-history' }, t('note-history'));
    open.addEventListener('click', () => showHistory(note.askedAt));
    return h('div', { class: 'rule-note', role: 'status', dataset: { request: String(note.request) } },
      h('span', { class: 'rule-note-text', dir: 'auto' }, did),
      h('span', { class: 'rule-note-when' }, new Date(note.at).toLocaleTimeString(locale(), { timeStyle: 'short' })),
      open, close);
  }));
  els.ruleNotes.hidden = notes.length === 0;
}

// ----- connect -----

async function showConnect() {
  state.mode = 'connect';
  state.firstRun = false;
  renderSidebar();
  renderMain();
  return renderConnect(els.connect, { toast });
}

async function showDevices() {
  state.mode = 'devices';
  state.firstRun = false;
  renderSidebar();
  renderMain();
  return renderDevices(els.devices, { toast });
}

// ----- toast, links -----

let toastTimer = null;
// A toast that points at something (`avoid`: the question it asks for) never covers it: it moves
// to the top of the window when its usual place, above the footer, would.
function toast(message, tone = 'info', { avoid = null } = {}) {
  els.toast.textContent = message;
  els.toast.dataset.tone = tone;
  els.toast.classList.remove('top');
  els.toast.hidden = false;
  if (avoid) {
    const covers = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    if (covers(els.toast.getBoundingClientRect(), avoid.getBoundingClientRect())) els.toast.classList.add('top');
  }
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { els.toast.hidden = true; }, tone === 'info' ? 3500 : 7000);
}

let pendingUrl = null;
let confirmFrom = null; // the link the confirm was opened from: the focus goes back to it
function askOpen(url, from) {
  pendingUrl = url;
  confirmFrom = from;
  els.confirmUrl.textContent = url;
  els.confirm.hidden = false;
  // A link opened by Enter opens on the key going down; the same press's keypress would press
  // whatever has the focus by then. So the focus moves once that press is over: one Enter, one act.
  setTimeout(() => { if (!els.confirm.hidden) els.confirmOk.focus(); }, 0);
}
function closeConfirm() {
  els.confirm.hidden = true;
  pendingUrl = null;
  if (confirmFrom && confirmFrom.isConnected) confirmFrom.focus();
  confirmFrom = null;
}
// The confirm is modal: Tab and Shift+Tab go round its two buttons.
els.confirm.addEventListener('keydown', (e) => {
  if (e.key !== 'Tab') return;
  e.preventDefault();
  const buttons = [els.confirmCancel, els.confirmOk];
  const at = buttons.indexOf(document.activeElement);
  buttons[(at + (e.shiftKey ? -1 : 1) + buttons.length) % buttons.length].focus();
});

// Links in rendered markdown never navigate the window: they open in the browser after a confirm.
document.addEventListener('click', (e) => {
  const link = e.target instanceof Element ? e.target.closest('a[href]') : null;
  if (!link) return;
  e.preventDefault();
  if (link.closest('.md')) askOpen(link.href, link);
});
els.confirmCancel.addEventListener('click', closeConfirm);
els.confirmOk.addEventListener('click', async () => {
  const url = pendingUrl;
  closeConfirm();
  try { await api.openLink(url); } catch (error) { toast(t('link-not-opened', { error: (error && error.message) || error }), 'error'); }
});

// ----- keyboard -----

// A window that appears (built, shown again, or raised by a new request) takes the focus from whatever the human was
// typing in, and a key already down there keeps repeating into this page (an Escape held elsewhere
// hid the new dialog as it loaded), and so would the next keys typed for the other window. So keys
// are taken only from a page that has been on screen for a moment, longer than a key is held before it starts repeating
// (660 ms by default under X, 500 ms in GNOME) and than a person takes to react to it: a key that
// goes down before, and its repeats until it is let go, do nothing. A key that reaches the page
// already repeating, never seen going down here (stuck by a release the window never received),
// does nothing either.
const ARM_AFTER_SHOWN_MS = 700;
let armedAt = 0;
let armTimer = null;
const held = new Set(); // keys that went down here once the page was armed, and are not up yet
// `data-keys` on the root says whether keys are taken ("hidden", "waiting", then "taken"), for
// anyone driving the page by its keys.
function armLater() {
  armedAt = performance.now() + ARM_AFTER_SHOWN_MS;
  held.clear();
  document.documentElement.dataset.keys = 'waiting';
  clearTimeout(armTimer);
  armTimer = setTimeout(() => { document.documentElement.dataset.keys = 'taken'; }, ARM_AFTER_SHOWN_MS);
}
armLater();
// Shown again by the app (a request arrived, a notification was clicked); a window the human
// brings back themselves was visible already.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') armLater();
  else { clearTimeout(armTimer); document.documentElement.dataset.keys = 'hidden'; els.empty.classList.remove('sent'); }
});
window.addEventListener('blur', () => held.clear());
document.addEventListener('keyup', (e) => held.delete(e.code), true);
const MOVES_ONLY = ['Tab', 'Shift', 'Control', 'Alt', 'Meta'];

// Runs before every other key handler (capture): keys from before the page was shown are dropped,
// and right after a swap only moving the focus (Tab) and hiding the window (Escape) are let through.
document.addEventListener('keydown', (e) => {
  const armed = performance.now() >= armedAt;
  if (armed && !e.repeat) held.add(e.code);
  if (!MOVES_ONLY.includes(e.key) && (!armed || (e.repeat && !held.has(e.code)))) {
    e.preventDefault();
    e.stopPropagation();
    return;
  }
  if (performance.now() >= guardUntil || [...MOVES_ONLY, 'Escape'].includes(e.key)) return;
  e.preventDefault();
  e.stopPropagation();
}, true);

document.addEventListener('keydown', (e) => {
  // A held key acts once: holding a digit must not toggle a choice on and off, nor Enter submit
  // the next request.
  if (e.repeat) return;
  const typing = isTextBox(e.target);
  if (e.key === 'Escape') {
    e.preventDefault();
    if (!els.confirm.hidden) closeConfirm();
    // Esc in a box leaves the box (to its question), never the window: what was typed stays in view.
    else if (typing) leaveBox(e.target);
    else api.hide();
    return;
  }
  // A dialog open (the link confirm, a plan review's question) keeps its keys to itself; a control
  // that took the key for itself (a plan's Enter, a queue row's Enter) has it.
  if (!els.confirm.hidden || document.querySelector('.plan-notes-modal') || e.defaultPrevented) return;
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    if (state.mode === 'queue') submit();
    return;
  }
  if (typing || e.ctrlKey || e.altKey || e.metaKey || state.mode !== 'queue') return;
  // Plain Enter submits from anywhere in the request but a text box (it types a line there) and a
  // button or link (it presses that).
  if (e.key === 'Enter' && !e.shiftKey) {
    if (!currentForm() || !els.request.contains(e.target) || e.target.closest('button, a[href], summary')) return;
    e.preventDefault();
    submit();
    return;
  }
  if (/^[1-9]$/.test(e.key)) {
    const form = currentForm();
    if (!form) return;
    // The question the focus is in (a card takes the focus when clicked), else the first one
    // still to answer.
    const inside = form.questions.find((c) => c.node.contains(document.activeElement));
    const target = inside || form.questions.find((c) => !c.answer()) || form.questions[0];
    if (target.pick(Number(e.key))) e.preventDefault();
  }
});

// The focus leaves a text box for the question around it (or the request), keeping its text.
function leaveBox(box) {
  const around = box.closest('.question') || (els.request.contains(box) ? els.request : null);
  if (around) around.focus({ preventScroll: true });
  else box.blur();
}

// ----- wiring -----

els.submit.addEventListener('click', submit);
els.closeEnded.addEventListener('click', closeEnded);
// In an ended request only reading, selecting and copying work: no click toggles, no key types.
els.form.addEventListener('click', (e) => {
  if (els.request.classList.contains('ended') && !(e.target instanceof HTMLTextAreaElement)) { e.preventDefault(); e.stopPropagation(); }
}, true);
els.form.addEventListener('keydown', (e) => {
  const reading = ['Tab', 'Escape', 'Shift', 'Control', 'Meta', 'Alt', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight',
    'Home', 'End', 'PageUp', 'PageDown'].includes(e.key) || ((e.ctrlKey || e.metaKey) && ['c', 'a', 'C', 'A'].includes(e.key));
  if (els.request.classList.contains('ended') && !reading) e.stopPropagation();
}, true);
// In a narrow window the queue is folded away (style.css); this button unfolds it over the page.
els.queueToggle.addEventListener('click', () => document.body.classList.toggle('queue-open'));
document.querySelector('.sidebar').addEventListener('click', (e) => {
  if (e.target instanceof Element && e.target.closest('.queue-item, .nav-item')) document.body.classList.remove('queue-open');
});
els.always.addEventListener('click', alwaysAnswer);
// Dismiss pressed by a key (a click of detail 0: Space or Enter after a Tab out of a box) never
// throws away typed text; a click does what it says.
els.dismiss.addEventListener('click', (e) => {
  const typed = [...els.form.querySelectorAll('textarea')].some((box) => box.value.trim());
  if (e.detail === 0 && typed) toast(t('not-dismissed'), 'warn');
  else dismiss();
});
els.form.addEventListener('submit', (e) => e.preventDefault());
els.navQueue.addEventListener('click', () => { state.mode = 'queue'; renderSidebar(); renderMain(); });
els.navHistory.addEventListener('click', showHistory);
els.navRules.addEventListener('click', showRules);
els.navConnect.addEventListener('click', showConnect);
els.navDevices.addEventListener('click', showDevices);
els.rulesNotice.addEventListener('click', showRules);
els.historyAnswerer.addEventListener('change', filterHistory);
els.historyAgent.addEventListener('change', filterHistory);
els.historyOutcome.addEventListener('change', filterHistory);
// The search reads History again once typing pauses, not on every key.
let searchTimer = null;
els.historySearch.addEventListener('input', () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(filterHistory, 250);
});
els.dnd.addEventListener('change', () => api.setDnd(els.dnd.checked));
wireChoices(toast);
wireLanguage(toast);

// The "waiting" ages tick only while the window is visible: a hidden window wakes for nothing.
let ageTimer = null;
function tickAges() {
  for (const el of document.querySelectorAll('.queue-age[data-since]')) el.textContent = waited(Number(el.dataset.since));
}
function syncAgeTimer() {
  const visible = document.visibilityState === 'visible';
  if (visible && ageTimer === null) {
    tickAges();
    ageTimer = setInterval(tickAges, 20000);
  } else if (!visible && ageTimer !== null) {
    clearInterval(ageTimer);
    ageTimer = null;
  }
}
document.addEventListener('visibilitychange', syncAgeTimer);
syncAgeTimer();

// A rule's countdown ticks every second, but only while the window is visible and one is shown.
let countdownTimer = null;
function tickCountdowns() {
  const shown = document.querySelectorAll('.rule-left[data-until]');
  for (const el of shown) el.textContent = timeLeft(Number(el.dataset.until));
  if (!shown.length) syncCountdown();
}
function syncCountdown() {
  const wanted = document.visibilityState === 'visible' && document.querySelector('.rule-left[data-until]') !== null;
  if (wanted && countdownTimer === null) {
    tickCountdowns();
    countdownTimer = setInterval(tickCountdowns, 1000);
  } else if (!wanted && countdownTimer !== null) {
    clearInterval(countdownTimer);
    countdownTimer = null;
  }
}
document.addEventListener('visibilitychange', syncCountdown);

// Another member of the desktop's race group (the person's phone) answered a request first: in
// place of its card when it was on screen (or had just left it), else as a notice.
function answeredElsewhere(p) {
  const where = t('elsewhere-where', { device: p.answeredOn });
  const onScreen = state.mode === 'queue' && (state.current === p.request || state.left === p.request);
  if (!onScreen) {
    toast(t('elsewhere-toast', { device: p.answeredOn, who: p.who }));
    return;
  }
  els.elsewhereWhere.textContent = where;
  els.elsewhereWho.textContent = t('elsewhere-who', { who: p.who });
  state.elsewhereUntil = performance.now() + ELSEWHERE_MS;
  clearTimeout(elsewhereTimer);
  elsewhereTimer = setTimeout(() => { state.elsewhereUntil = 0; renderMain(); }, ELSEWHERE_MS);
  renderMain();
}

async function start() {
  if (!available()) {
    // No backend, no catalogue: said in English.
    toast('The askdesk backend is not reachable from this page.', 'error');
    return;
  }
  // The page's words first: everything drawn from here on is in the app's language. The queue is
  // read meanwhile, and drawn as soon as the words are in: a window built for a question draws it
  // without waiting for the listeners (a change between that read and the listeners is read
  // again below).
  const early = api.queue();
  const catalogue = await api.catalogue();
  useCatalogue(catalogue);
  translate();
  showLanguages(catalogue);
  const listening = Promise.all([
    listen('queue-changed', () => refreshQueue()),
    listen('request-withdrawn', (p) => {
      if (p.answeredOn) answeredElsewhere(p);
      // A rule whose `after` time passed leaves a lasting note instead (notes-changed); a request
      // the person had typed in stays on screen, ended, and says it there.
      else if (!p.rule && !p.kept && p.message) toast(t('ended-said', { said: p.message }), 'warn');
    }),
    listen('focus-request', async (p) => {
      await refreshQueue();
      if (state.queue.some((v) => v.request === p.request)) {
        state.current = p.request;
        state.mode = 'queue';
        renderSidebar();
        renderMain();
      }
    }),
    // The app gives the visible window the focus (a request arrived): keys from the window the
    // person was typing in do not act here either.
    listen('window-raised', () => armLater()),
    listen('dnd-changed', (on) => { els.dnd.checked = on; }),
    listen('notes-changed', () => refreshNotes()),
    listen('history-changed', () => { if (state.mode === 'history') loadHistory(); }),
    // A reload may call off a rule's deadline: the queue shows deadlines.
    listen('rules-changed', () => { refreshRules(); refreshQueue(); }),
    // A window a question opened says "Sent" after the last answer, a moment before it hides.
    listen('answers-sent', () => els.empty.classList.add('sent')),
  ]);
  const settings = api.settings().then((s) => { els.dnd.checked = s.dnd; showChoices(s); });
  // A window built to open one request (a notification was activated) names it in its address; one
  // rebuilt for no request in particular names the request and view the last page showed.
  const address = new URLSearchParams(window.location.hash.slice(1));
  const asked = /^\d+$/.test(address.get('request') || '') ? Number(address.get('request')) : null;
  if (asked !== null) state.current = asked;
  const view = address.get('view');
  if (['history', 'rules', 'connect', 'devices'].includes(view)) state.mode = view;
  const first = refreshQueue(early);
  await listening;
  await Promise.all([settings, first, refreshQueue(), refreshRules(), refreshNotes()]);
  if (state.mode === 'history') await showHistory();
  else if (state.mode === 'rules') await showRules();
  else if (state.mode === 'connect') await showConnect();
  else if (state.mode === 'devices') await showDevices();
  // The first run (no question settled yet, no agent connected) opens on Connect rather than on
  // an empty window; the backend decides what counts as one.
  else if (asked === null && !view && !state.queue.length) {
    const first = await api.connectView().catch(() => null);
    if (first && first.firstRun && state.mode === 'queue' && !state.queue.length) {
      const drawn = showConnect();
      // Marked at once, not after Connect has drawn: a question that arrives meanwhile takes its
      // place (refreshQueue), instead of waiting behind a Connect view the person never opened.
      state.firstRun = true;
      await drawn;
    }
  }
  document.body.dataset.ready = 'true';
}

start();
