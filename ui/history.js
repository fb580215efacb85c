// askdesk UI: the History view: settled requests and plan threads from the journal, newest first, filtered by agent, answerer and outcome; "Make a rule" from an answered request.
import { h, agentName, when, displayLabel } from './dom.js';
import { api } from './bridge.js';
import { previewRule } from './rule_preview.js';

const OUTCOME_NAMES = {
  answered: 'Answered',
  dismissed: 'Dismissed',
  withdrawn: 'Withdrawn',
  failed: 'Failed',
  'late-answer': 'Late answer',
};

/** The record an entry is filtered and sorted by: itself, or a plan thread's latest version. */
function latest(entry) {
  return entry.kind === 'plan-thread' ? entry.versions[entry.versions.length - 1] : entry;
}

/**
 * Renders one page of History (the backend's HistoryPage: the newest entries the filters let
 * through, how many match and how many there are, and every agent and answerer in the journal for
 * the filters). When more match than were sent, the list ends with "Show more", which calls `onMore`.
 */
export function renderHistory(page, { list, agentSelect, answererSelect, onMore }) {
  fillSelect(agentSelect, 'All agents', page.agents);
  fillSelect(answererSelect, 'Anyone', page.answerers);
  if (!page.entries.length) {
    list.replaceChildren(h('li', { class: 'history-empty' },
      page.total ? 'Nothing matches these filters.' : 'Nothing has been asked yet.'));
    return;
  }
  const items = page.entries.map((e) => (e.kind === 'plan-thread' ? thread(e) : entry(e)));
  const rest = page.matching - page.entries.length;
  if (rest > 0) {
    const more = h('button', { type: 'button', class: 'button ghost history-more-button' },
      `Show ${Math.min(rest, page.entries.length).toLocaleString()} more`);
    more.addEventListener('click', () => { more.disabled = true; onMore(); });
    items.push(h('li', { class: 'history-more' },
      h('span', { class: 'muted' }, `The newest ${page.entries.length.toLocaleString()} of ${page.matching.toLocaleString()}.`),
      more));
  }
  list.replaceChildren(...items);
}

/** A filter's options: "all" first, then `values`; the choice is kept when it is still offered. */
function fillSelect(select, all, values) {
  const keep = select.value;
  select.replaceChildren(h('option', { value: '' }, all), ...values.map((v) => h('option', { value: v, title: v }, v)));
  select.value = values.includes(keep) ? keep : '';
}

/** A plan thread: one entry, its versions oldest first with the decision at each. */
function thread(t) {
  const last = latest(t);
  const q = last.questions.find((x) => x.intent && x.intent.kind === 'plan-review') || last.questions[0];
  return h('li', { class: 'history-item card plan-thread', dataset: { outcome: last.outcome } },
    h('div', { class: 'history-top' },
      h('span', { class: `pill outcome ${last.outcome}` }, OUTCOME_NAMES[last.outcome] || last.outcome),
      h('span', { class: 'pill thread' }, `Plan · ${t.versions.length} version${t.versions.length === 1 ? '' : 's'}`),
      h('span', { class: 'history-agent' }, agentName(last.agent)),
      answeredBy(last),
      last.agent && last.agent.meta && last.agent.meta.cwd
        ? h('span', { class: 'history-cwd mono' }, String(last.agent.meta.cwd)) : null,
      h('span', { class: 'history-when', title: `asked ${when(last.askedAt)}` }, when(last.settledAt))),
    h('div', { class: 'thread-question' }, q.header ? h('span', { class: 'q-header inline' }, q.header) : null, q.question),
    h('ol', { class: 'thread-versions' }, t.versions.map((v, i) => {
      const item = ((v.answer && v.answer.answers) || []).find((a) => a.id === q.id);
      return h('li', { class: 'thread-version' },
        h('span', { class: 'version-number' }, `v${i + 1}`),
        h('span', { class: `pill decision ${v.decision.startsWith('approved') ? 'ok' : ''}` }, v.decision),
        item && item.custom ? feedback(item.custom) : null,
        h('span', { class: 'history-when' }, when(v.settledAt)));
    })));
}

// The feedback sent with one version: one line, and all of it on a click (or Enter), so what was
// said in earlier rounds can be read once the thread is over.
function feedback(text) {
  const button = h('button', { type: 'button', class: 'version-feedback', 'aria-expanded': 'false', title: 'Show all of it' }, text);
  button.addEventListener('click', () => {
    const open = button.classList.toggle('open');
    button.setAttribute('aria-expanded', String(open));
    button.title = open ? 'Show one line' : 'Show all of it';
  });
  return button;
}

function entry(record) {
  const answers = new Map(((record.answer && record.answer.answers) || []).map((a) => [a.id, a]));
  return h('li', { class: 'history-item card', dataset: { outcome: record.outcome } },
    h('div', { class: 'history-top' },
      h('span', { class: `pill outcome ${record.outcome}` }, OUTCOME_NAMES[record.outcome] || record.outcome),
      h('span', { class: 'history-agent' }, agentName(record.agent)),
      answeredBy(record),
      record.agent && record.agent.meta && record.agent.meta.cwd
        ? h('span', { class: 'history-cwd mono' }, String(record.agent.meta.cwd)) : null,
      h('span', { class: 'history-when', title: `asked ${when(record.askedAt)}` }, when(record.settledAt)),
      makeRuleButton(record)),
    h('dl', { class: 'history-qa' }, record.questions.map((q) => {
      const a = answers.get(q.id);
      return [
        h('dt', {}, q.header ? h('span', { class: 'q-header inline' }, q.header) : null, q.question),
        h('dd', {}, a ? answerText(a) : h('span', { class: 'muted' }, '—')),
      ];
    })),
    record.error ? h('div', { class: 'history-error' },
      record.error.code ? h('span', { class: 'mono' }, record.error.code) : null, ' ', record.error.message) : null);
}

/** "Make a rule" on a request the human answered: the rule that repeats that answer, previewed before it is saved. */
function makeRuleButton(record) {
  const answeredByYou = record.answer && ['answered', 'late-answer'].includes(record.outcome) &&
    !(record.answerer || '').startsWith('rule:');
  if (!answeredByYou) return null;
  const button = h('button', { type: 'button', class: 'link make-rule' }, 'Make a rule');
  button.addEventListener('click', async () => {
    if (await previewRule('Make a rule', () => api.draftRuleFromHistory(record))) {
      button.textContent = 'Rule saved';
      button.disabled = true;
    }
  });
  return button;
}

function answerText(item) {
  const parts = item.selected.map(displayLabel);
  if (item.custom) parts.push(`“${item.custom}”`);
  return parts.length ? parts.join(', ') : h('span', { class: 'muted' }, 'skipped');
}

// ----- who answered -----

/**
 * Who settled a record, as History names it: "you" for the desktop (dialog or notification),
 * "rule:<name>" for a rule, another answerer's label as the journal has it; null when nobody did
 * (withdrawn, refused by the broker).
 */
function answererName(record) {
  const answerer = record.answerer;
  if (!answerer) return null;
  return answerer === 'desktop' ? 'you' : answerer;
}

/** The "by you" / "by rule:fmt" tag of an entry, or nothing. */
function answeredBy(record) {
  const name = answererName(record);
  return name ? h('span', { class: `pill answerer${name.startsWith('rule:') ? ' rule' : ''}` }, `by ${name}`) : null;
}

