// askdesk UI: the answer rules: the Rules view (rules, counts, mode switches, the file's error, the
// empty state's example and "Open rules file"), the sidebar's notice while the rules file is
// broken, and shadow rules' suggestions in the dialog.
import { h, displayLabel } from './dom.js';
import { t, tAttr } from './l10n.js';

/** The modes a rule's switch offers: the rules file's word, the switch's name for it, and what it means. */
function modes() {
  return [
    ['on', t('rules-mode-on'), tAttr('rules-mode-on', 'title')],
    ['shadow', t('rules-mode-shadow'), tAttr('rules-mode-shadow', 'title')],
    ['off', t('rules-mode-off'), tAttr('rules-mode-off', 'title')],
  ];
}

/**
 * Renders the Rules view. `view` is what get_rules returns; `onMode(name, mode)` writes a rule's
 * mode into the file (a switch is disabled while the file is broken: an edit would be refused).
 */
export function renderRules(view, { path, error, list, onMode, onOpen }) {
  path.textContent = view.path || t('rules-no-folder');
  error.hidden = !view.error;
  if (view.error) {
    const what = view.error.problem || view.error.message;
    error.replaceChildren(
      h('div', { class: 'rules-error-title' }, t('rules-error-title')),
      h('div', { class: 'rules-error-what mono' }, view.error.line
        ? t('rules-error-at', { line: view.error.line, column: view.error.column, problem: what })
        : what),
      h('div', { class: 'rules-error-kept' }, t('rules-error-kept', { rules: view.rules.length })));
  }
  if (!view.rules.length) {
    // A broken file shows only its error; a file with no rules, how to start one.
    if (view.error) list.replaceChildren();
    else if (!view.example) list.replaceChildren(h('li', { class: 'history-empty' }, t('rules-list-none')));
    else {
      list.replaceChildren(h('li', { class: 'rules-empty card' },
        h('p', {}, t('rules-empty')),
        h('pre', { class: 'rules-example mono' }, view.example),
        h('p', { class: 'muted' }, t('rules-empty-from-answer')),
        h('button', { type: 'button', class: 'button primary open-rules-file', onclick: onOpen }, t('rules-open-file'))));
    }
    return;
  }
  list.replaceChildren(...view.rules.map((rule) => ruleCard(rule, Boolean(view.error), onMode)));
}

function ruleCard(rule, broken, onMode) {
  const switcher = h('div', { class: 'mode-switch', role: 'radiogroup', 'aria-label': t('rules-mode-aria', { name: rule.name }) },
    modes().map(([mode, label, title]) => {
      const button = h('button', {
        type: 'button', role: 'radio', class: `mode-option${rule.mode === mode ? ' active' : ''}`,
        'aria-checked': String(rule.mode === mode), title, dataset: { mode },
      }, label);
      button.disabled = broken;
      button.addEventListener('click', () => { if (rule.mode !== mode) onMode(rule.name, mode); });
      return button;
    }));
  const counts = rule.counts;
  // The number in its own element (the tests read it), the words after it.
  const count = (n, what, words, title) => h('span', { class: 'rule-count', title },
    h('span', { class: 'rule-count-n', dataset: { count: what } }, String(n)), ' ', words);
  return h('li', { class: `rule-item card mode-${rule.mode}`, dataset: { rule: rule.name, mode: rule.mode } },
    h('div', { class: 'rule-top' },
      h('span', { class: 'rule-name' }, rule.name),
      h('span', { class: `pill mode ${rule.mode}` }, rule.mode),
      h('span', { class: 'rule-line muted' }, t('rules-line', { line: rule.line })),
      switcher),
    h('dl', { class: 'rule-facts' },
      h('dt', {}, t('rules-matches')), h('dd', { class: 'rule-match mono' }, rule.matches),
      h('dt', {}, t('rules-does')), h('dd', { class: 'rule-action' }, rule.action),
      rule.after ? [h('dt', {}, t('rules-after')), h('dd', { class: 'rule-after mono' }, rule.after)] : null),
    rule.warning ? h('p', { class: 'rule-warning', role: 'note' }, rule.warning) : null,
    counts ? h('div', { class: 'rule-counts' },
      count(counts.hits, 'hits', t('rules-count-hits', { count: counts.hits }), tAttr('rules-count-hits', 'title')),
      count(counts.acted, 'acted', t('rules-count-acted', { count: counts.acted }), tAttr('rules-count-acted', 'title')),
      count(counts.agreed, 'agreed', t('rules-count-agreed', { count: counts.agreed }), tAttr('rules-count-agreed', 'title')),
      count(counts.differed, 'differed', t('rules-count-differed', { count: counts.differed }), tAttr('rules-count-differed', 'title'))) : null);
}

/** The sidebar's notice while the rules file is broken; hidden otherwise. */
export function showRulesNotice(notice, view) {
  notice.hidden = !view.error;
  notice.title = view.error ? view.error.message : '';
}

/**
 * Under each question a shadow rule has an answer for: "Rule “fmt” (shadow) suggests: Yes" and a
 * "Use" button that selects it (the human still submits). A rule that would deny or dismiss is
 * said above the questions, without a button. Plan reviews get no suggestion buttons.
 */
export function showSuggestions(view, node) {
  for (const suggestion of view.suggestions || []) {
    if (suggestion.says) {
      node.prepend(h('div', { class: 'suggestion request-level', dataset: { rule: suggestion.rule } },
        t('rules-suggests', { rule: suggestion.rule, says: suggestion.says })));
      continue;
    }
    for (const item of suggestion.answers) {
      const q = view.questions.find((x) => x.id === item.id);
      const card = q && !q.planReview && node.querySelector(`[data-qid="${CSS.escape(q.id)}"]`);
      if (!card) continue;
      // Use acts once: it then says "Used" and does nothing (a second Enter, a held key's repeats)
      // until the choice in the card changes. It keeps the focus, so no later key lands elsewhere.
      const use = h('button', { type: 'button', class: 'link use-suggestion' }, t('rules-use'));
      const ready = () => { use.removeAttribute('aria-disabled'); use.textContent = t('rules-use'); };
      let using = false;
      use.addEventListener('click', () => {
        if (use.getAttribute('aria-disabled') === 'true') return;
        using = true;
        try { useAnswer(card, item); } finally { using = false; }
        use.setAttribute('aria-disabled', 'true');
        use.textContent = t('rules-used');
      });
      // Any change but Use's own (a click, a digit, typing) makes Use ready again.
      card.addEventListener('change', () => { if (!using) ready(); });
      card.addEventListener('input', () => { if (!using) ready(); });
      const words = [...item.selected.map(displayLabel), ...(item.custom ? [`“${item.custom}”`] : [])].join(', ');
      card.querySelector('.q-text').after(h('div', { class: 'suggestion', dataset: { rule: suggestion.rule } },
        h('span', {}, t('rules-suggests', { rule: suggestion.rule, says: words })), ' ', use));
    }
  }
}

/** Selects a suggested answer item in a question card, as if the human had picked it. */
function useAnswer(card, item) {
  for (const input of card.querySelectorAll('input.option-input:not(.other-choice)')) {
    input.checked = item.selected.includes(input.value);
    input.dispatchEvent(new Event('change'));
  }
  const text = card.querySelector('textarea.other-input');
  const other = card.querySelector('input.other-choice');
  if (item.custom && text) {
    text.value = item.custom;
    if (other) other.checked = true;
    text.dispatchEvent(new Event('input'));
  } else if (other && other.checked) {
    other.checked = false;
  }
}
