// askdesk UI: the History view: the page of settled requests and plan threads the backend found (newest first, grouped by day), its filters and search, and "Make a rule" from an answered request.
import { h, when, displayLabel, daysAgo } from './dom.js';
import { api } from './bridge.js';
import { previewRule } from './rule_preview.js';
import { imageStrip } from './images.js';
import { t, tAttr, locale } from './l10n.js';

/**
 * Renders one page of History (the backend's HistoryPage: the newest entries the filters and the
 * search let through, how many match and how many there are, every agent, answerer and outcome for
 * the filters). When more match than were sent, the list ends with "Show more", which calls `onMore`.
 */
export function renderHistory(page, { list, agentSelect, answererSelect, outcomeSelect, onMore }) {
  searched = searchPattern(page.words || []);
  fillSelect(agentSelect, t('history-all-agents'), page.agents.map((v) => [v, v]));
  fillSelect(answererSelect, t('history-anyone'), page.answerers.map((a) => [a.value, a.name]));
  fillSelect(outcomeSelect, t('history-all-outcomes'), page.outcomes.map((o) => [o.value, o.name]));
  if (!page.entries.length) {
    list.replaceChildren(h('li', { class: 'history-empty' },
      t(page.total ? 'history-nothing-matches' : 'history-nothing-yet')));
    return;
  }
  const items = [];
  let day = null;
  for (const e of page.entries) {
    const settled = e.kind === 'plan-thread' ? e.versions[e.versions.length - 1].settledAt : e.settledAt;
    const thisDay = new Date(settled).toDateString();
    if (thisDay !== day) {
      day = thisDay;
      items.push(h('li', { class: 'history-day', role: 'presentation' }, dayName(settled)));
    }
    items.push(e.kind === 'plan-thread' ? thread(e) : entry(e));
  }
  const rest = page.matching - page.entries.length;
  if (rest > 0) {
    const more = h('button', { type: 'button', class: 'button ghost history-more-button' },
      t('history-show-more', { count: Math.min(rest, page.entries.length) }));
    more.addEventListener('click', () => { more.disabled = true; onMore(); });
    items.push(h('li', { class: 'history-more' },
      h('span', { class: 'muted' }, t('history-newest', { shown: page.entries.length, matching: page.matching })),
      more));
  }
  list.replaceChildren(...items);
}

/** A filter's options: "all" first, then `[value, name]` pairs; the choice is kept when it is still offered. */
function fillSelect(select, all, choices) {
  const keep = select.value;
  select.replaceChildren(h('option', { value: '' }, all),
    ...choices.map(([value, name]) => h('option', { value }, name)));
  select.value = choices.some(([value]) => value === keep) ? keep : '';
}

// The words searched for, as one case-insensitive pattern (null: no search): marked where they show.
let searched = null;

function searchPattern(words) {
  const escaped = words.filter(Boolean).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  // Longest first, so a word inside another is not marked in its stead.
  escaped.sort((a, b) => b.length - a.length);
  return escaped.length ? new RegExp(escaped.join('|'), 'giu') : null;
}

/** `text` with the searched words in <mark>, as text nodes and elements (never parsed as HTML). */
function marked(text) {
  if (!searched || !text) return text;
  const parts = [];
  let at = 0;
  for (const m of text.matchAll(searched)) {
    if (!m[0]) continue;
    if (m.index > at) parts.push(text.slice(at, m.index));
    parts.push(h('mark', { class: 'search-hit' }, m[0]));
    at = m.index + m[0].length;
  }
  if (at < text.length) parts.push(text.slice(at));
  return parts;
}

/** The time of day: the day is said by the group the entry sits under. */
function timeOfDay(millis) {
  return new Date(millis).toLocaleTimeString(locale(), { timeStyle: 'short' });
}

/** "Today", "Yesterday", else the date with its weekday, in the person's locale. */
function dayName(millis) {
  const day = new Date(millis);
  const today = new Date();
  const ago = daysAgo(millis, today);
  if (ago === 0) return t('history-today');
  if (ago === 1) return t('history-yesterday');
  return day.toLocaleDateString(locale(), {
    weekday: 'long', day: 'numeric', month: 'long',
    year: day.getFullYear() === today.getFullYear() ? undefined : 'numeric',
  });
}

/** The line every entry starts with: outcome, who asked, who answered, where, when. */
function top(e, { pill = null, tail = null } = {}) {
  return h('div', { class: 'history-top' },
    h('span', { class: `pill outcome ${e.outcome}` }, e.outcomeName),
    pill,
    h('span', { class: 'history-agent', dir: 'auto' }, marked(e.who)),
    e.by ? h('span', { class: `pill answerer${e.byRule ? ' rule' : ''}` }, `${t('history-by')} `, marked(e.by)) : null,
    e.project ? h('span', { class: 'history-cwd mono' }, marked(e.project)) : null,
    h('span', { class: 'history-when', title: tAttr('history-when', 'title', { asked: when(e.askedAt), settled: when(e.settledAt) }) },
      timeOfDay(e.settledAt)),
    tail);
}

/** A plan thread: one entry, its versions oldest first with the decision at each. */
function thread(th) {
  const last = th.versions[th.versions.length - 1];
  const q = last.questions.find((x) => x.intent && x.intent.kind === 'plan-review') || last.questions[0];
  return h('li', { class: 'history-item card plan-thread', dataset: { outcome: last.outcome, asked: th.versions.map((v) => v.askedAt).join(' ') } },
    top(last, { pill: h('span', { class: 'pill thread' }, t('history-plan-versions', { versions: th.versions.length })) }),
    h('div', { class: 'thread-question' }, q.header ? h('span', { class: 'q-header inline' }, marked(q.header)) : null, marked(q.question)),
    h('ol', { class: 'thread-versions' }, th.versions.map((v, i) =>
      h('li', { class: 'thread-version' },
        h('span', { class: 'version-number' }, `v${i + 1}`),
        h('span', { class: `pill decision ${v.decision.startsWith('approved') ? 'ok' : ''}` }, v.decision),
        v.feedbackHtml ? feedback(v.feedbackLine, v.feedbackHtml) : null,
        // A version settled on the day the thread is listed under says only its time.
        h('span', { class: 'history-when', title: when(v.settledAt) },
          daysAgo(v.settledAt, new Date(last.settledAt)) === 0 ? timeOfDay(v.settledAt) : when(v.settledAt))))));
}

// The feedback sent with one version: one line, and all of it, rendered, on a click (or Enter or
// Space), so what was said in earlier rounds can be read once the thread is over.
function feedback(line, html) {
  const full = h('div', { class: 'md feedback-full', hidden: true });
  full.innerHTML = html; // sanitized by markdown.rs, like detailHtml
  const box = h('div', { class: 'version-feedback', role: 'button', tabindex: '0', 'aria-expanded': 'false', title: t('history-show-all') },
    h('span', { class: 'feedback-line' }, marked(line)), full);
  const toggle = () => {
    const open = box.classList.toggle('open');
    full.hidden = !open;
    box.setAttribute('aria-expanded', String(open));
    box.title = t(open ? 'history-show-line' : 'history-show-all');
  };
  box.addEventListener('click', (event) => { if (!event.target.closest('a')) toggle(); });
  box.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); toggle(); }
  });
  return box;
}

function entry(e) {
  const answers = new Map(((e.answer && e.answer.answers) || []).map((a) => [a.id, a]));
  // What the person had typed in a request that ended before they sent it.
  const drafts = new Map(((e.draft && e.draft.answers) || []).map((a) => [a.id, a]));
  return h('li', { class: 'history-item card', dataset: { outcome: e.outcome, entry: e.id, asked: String(e.askedAt) } },
    top(e, { tail: e.canMakeRule ? makeRuleButton(e.id) : null }),
    h('dl', { class: 'history-qa' }, e.questions.map((q) => {
      const a = answers.get(q.id);
      const d = drafts.get(q.id);
      return [
        h('dt', {}, q.header ? h('span', { class: 'q-header inline' }, marked(q.header)) : null, marked(q.question),
          imageStrip(q.images)),
        h('dd', {}, a ? [answerText(a), imageStrip(a.images, t('history-answer-picture'))]
          : d ? [h('span', { class: 'history-draft' }, h('span', { class: 'pill draft' }, t('history-draft')), ' ', answerText(d)),
            imageStrip(d.images, t('history-draft-picture'))]
            : h('span', { class: 'muted' }, '—')),
      ];
    })),
    e.imagesOmitted ? h('p', { class: 'muted history-images-omitted' },
      t('history-images-omitted', { images: e.imagesOmitted })) : null,
    e.problem ? h('div', { class: 'history-error' }, e.problem) : null);
}

/** "Make a rule" on a request the person answered: the rule that repeats that answer, previewed before it is saved. */
function makeRuleButton(id) {
  const button = h('button', { type: 'button', class: 'link make-rule' }, t('history-make-rule'));
  button.addEventListener('click', async () => {
    if (await previewRule(t('history-make-rule'), () => api.draftRuleFromHistory(id))) {
      button.textContent = t('history-rule-saved');
      button.disabled = true;
    }
  });
  return button;
}

function answerText(item) {
  const parts = item.selected.map(displayLabel);
  if (item.custom) parts.push(`“${item.custom}”`);
  if (parts.length) return marked(parts.join(', '));
  // A picture alone is an answer: its thumbnail follows.
  return item.images && item.images.length ? null : h('span', { class: 'muted' }, t('history-was-skipped'));
}
