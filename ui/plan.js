// askdesk UI: the plan-review pane: the plan as a document with its outline, and the decision beside it.
import { h, displayLabel } from './dom.js';
import { detail } from './question.js';

/**
 * Renders a plan-review question. `alone` is true when the plan is the whole batch: then Approve
 * answers at once through `submitNow`. Returns the same controller shape as plainQuestion.
 */
export function planQuestion(q, index, { alone, submitNow }) {
  const approveLabel = q.intent.approve;
  const others = q.options.filter((o) => o.label !== approveLabel);
  let selected = null;
  let skipped = false;

  const doc = detail(q.detailHtml || '');
  doc.classList.add('plan-doc');

  const outline = q.outline.length
    ? h('nav', { class: 'plan-outline', 'aria-label': 'Plan outline' },
        h('div', { class: 'side-title' }, 'Contents'),
        h('ol', {}, q.outline.map((heading) =>
          h('li', { class: `lvl${Math.min(heading.level, 4)}` },
            h('button', {
              type: 'button',
              class: 'outline-link',
              onclick: () => {
                const target = doc.querySelector(`#${CSS.escape(heading.anchor)}`);
                if (target) target.scrollIntoView({ behavior: 'smooth', block: 'start' });
              },
            }, heading.text)))))
    : null;

  const approve = h('button', { type: 'button', class: 'button primary plan-approve', 'aria-pressed': 'false' },
    h('span', { class: 'check', 'aria-hidden': 'true' }, '✓'), ' ', displayLabel(approveLabel));
  const otherInputs = others.map((o) => h('input', { type: 'radio', name: `plan${index}`, value: o.label, class: 'option-input' }));
  const feedback = h('textarea', {
    class: 'plan-feedback other-input',
    rows: 4,
    placeholder: 'What should change? Your feedback goes back to the agent instead of a choice.',
    'aria-label': 'Feedback on the plan',
  });

  function choose(label) {
    selected = label;
    approve.classList.toggle('pressed', label === approveLabel);
    approve.setAttribute('aria-pressed', String(label === approveLabel));
    otherInputs.forEach((input) => { input.checked = input.value === label; });
    card.classList.remove('missing');
  }
  approve.addEventListener('click', () => {
    choose(approveLabel);
    if (alone && !feedback.value.trim()) submitNow();
  });
  otherInputs.forEach((input) => input.addEventListener('change', () => { if (input.checked) choose(input.value); }));
  feedback.addEventListener('input', () => {
    card.classList.remove('missing');
    // Single select: feedback replaces the choice (SPEC 1), so the choice visibly lets go.
    if (!q.multiSelect && feedback.value.trim() && selected) choose(null);
  });

  const skipButton = h('button', { type: 'button', class: 'link skip' }, 'Skip this question');
  skipButton.addEventListener('click', () => {
    skipped = !skipped;
    card.classList.toggle('skipped', skipped);
    for (const el of [approve, feedback, ...otherInputs]) el.disabled = skipped;
    skipButton.textContent = skipped ? 'Undo skip' : 'Skip this question';
  });

  const decision = h('div', { class: 'plan-decision card' },
    q.header ? h('div', { class: 'q-header' }, q.header) : null,
    h('div', { class: 'q-text' }, q.question),
    approve,
    others.length
      ? h('div', { class: 'options compact', role: 'radiogroup' }, others.map((o, i) =>
          h('label', { class: 'option' }, otherInputs[i],
            h('span', { class: 'option-body' },
              h('span', { class: 'option-title' }, h('span', { class: 'option-label' }, displayLabel(o.label))),
              o.description ? h('span', { class: 'option-desc' }, o.description) : null))))
      : null,
    h('label', { class: 'feedback-label' }, 'Feedback', feedback),
    h('div', { class: 'q-foot' }, skipButton));

  const card = h('section', { class: 'question plan-review', dataset: { qid: q.id } },
    h('div', { class: 'plan-layout' },
      h('div', { class: 'plan-main card' }, h('div', { class: 'plan-kicker' }, 'Plan for review'), doc),
      h('div', { class: 'plan-side' }, decision, outline)));

  return {
    id: q.id,
    node: card,
    answer() {
      if (skipped) return { id: q.id, selected: [] };
      const text = feedback.value.trim();
      if (!q.multiSelect && text) return { id: q.id, selected: [], custom: text };
      if (!selected) return text ? { id: q.id, selected: [], custom: text } : null;
      return text ? { id: q.id, selected: [selected], custom: text } : { id: q.id, selected: [selected] };
    },
    pick(n) {
      if (skipped) return false;
      const labels = [approveLabel, ...others.map((o) => o.label)];
      if (!labels[n - 1]) return false;
      choose(labels[n - 1]);
      return true;
    },
    focus() { approve.focus(); },
    markMissing() {
      card.classList.add('missing');
      decision.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
    },
  };
}
