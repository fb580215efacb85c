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

/** Renders `entries` (newest first) into the history list, honouring the filters. */
export function renderHistory(entries, { list, agentSelect, outcomeSelect, answererSelect }) {
  const records = entries.map(latest);
  const agents = [...new Set(records.map((r) => agentName(r.agent)))].sort();
  const keep = agentSelect.value;
  agentSelect.replaceChildren(h('option', { value: '' }, 'All agents'), ...agents.map((a) => h('option', { value: a, title: a }, a)));
  agentSelect.value = agents.includes(keep) ? keep : '';
  fillAnswerers(answererSelect, records);

  const shown = entries.filter((e) => {
    const r = latest(e);
    return (!agentSelect.value || agentName(r.agent) === agentSelect.value) &&
      (!outcomeSelect.value || r.outcome === outcomeSelect.value) &&
      (!answererSelect.value || answererName(r) === answererSelect.value);
  });

  if (!shown.length) {
    list.replaceChildren(h('li', { class: 'history-empty' },
      records.length ? 'Nothing matches these filters.' : 'Nothing has been asked yet.'));
    return;
  }
  list.replaceChildren(...shown.map((e) => (e.kind === 'plan-thread' ? thread(e) : entry(e))));
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
export function answererName(record) {
  const answerer = record.answerer;
  if (!answerer) return null;
  return answerer === 'desktop' ? 'you' : answerer;
}

/** The "by you" / "by rule:fmt" tag of an entry, or nothing. */
function answeredBy(record) {
  const name = answererName(record);
  return name ? h('span', { class: `pill answerer${name.startsWith('rule:') ? ' rule' : ''}` }, `by ${name}`) : null;
}

/** The answerer filter: "Anyone", "you" first, then the rules and other answerers present. */
function fillAnswerers(select, records) {
  const names = [...new Set(records.map(answererName).filter(Boolean))]
    .sort((a, b) => (a === 'you' ? -1 : b === 'you' ? 1 : a.localeCompare(b)));
  const keep = select.value;
  select.replaceChildren(h('option', { value: '' }, 'Anyone'), ...names.map((n) => h('option', { value: n, title: n }, n)));
  select.value = names.includes(keep) ? keep : '';
}
