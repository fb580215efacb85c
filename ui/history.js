// askdesk UI: the History view: settled requests from the journal, newest first, filtered by agent and outcome.
import { h, agentName, when, displayLabel } from './dom.js';

const OUTCOME_NAMES = {
  answered: 'Answered',
  dismissed: 'Dismissed',
  withdrawn: 'Withdrawn',
  failed: 'Failed',
  'late-answer': 'Late answer',
};

/** Renders `records` (newest first) into the history list, honouring the two filters. */
export function renderHistory(records, { list, agentSelect, outcomeSelect }) {
  const agents = [...new Set(records.map((r) => agentName(r.agent)))].sort();
  const keep = agentSelect.value;
  agentSelect.replaceChildren(h('option', { value: '' }, 'All agents'), ...agents.map((a) => h('option', { value: a }, a)));
  agentSelect.value = agents.includes(keep) ? keep : '';

  const shown = records.filter((r) =>
    (!agentSelect.value || agentName(r.agent) === agentSelect.value) &&
    (!outcomeSelect.value || r.outcome === outcomeSelect.value));

  if (!shown.length) {
    list.replaceChildren(h('li', { class: 'history-empty' },
      records.length ? 'Nothing matches these filters.' : 'Nothing has been asked yet.'));
    return;
  }
  list.replaceChildren(...shown.map(entry));
}

function entry(record) {
  const answers = new Map(((record.answer && record.answer.answers) || []).map((a) => [a.id, a]));
  return h('li', { class: 'history-item card', dataset: { outcome: record.outcome } },
    h('div', { class: 'history-top' },
      h('span', { class: `pill outcome ${record.outcome}` }, OUTCOME_NAMES[record.outcome] || record.outcome),
      h('span', { class: 'history-agent' }, agentName(record.agent)),
      record.agent && record.agent.meta && record.agent.meta.cwd
        ? h('span', { class: 'history-cwd mono' }, String(record.agent.meta.cwd)) : null,
      h('span', { class: 'history-when', title: `asked ${when(record.askedAt)}` }, when(record.settledAt))),
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

function answerText(item) {
  const parts = item.selected.map(displayLabel);
  if (item.custom) parts.push(`“${item.custom}”`);
  return parts.length ? parts.join(', ') : h('span', { class: 'muted' }, 'skipped');
}
