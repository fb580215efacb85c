// askdesk UI: the preview of a rule made from an answer ("Always answer this way here", "Make a rule"): how far it reaches (the scopes the backend drafted, each with the History entries it would have matched), on or as a shadow, the rule's text, the file it goes to, Save / Cancel; errors stay in the preview.
import { api } from './bridge.js';
import { h, when, errorText } from './dom.js';
import { t } from './l10n.js';

/**
 * Opens the preview of the rule `draft()` drafts (a promise of the backend's RuleDraftView).
 * Resolves true once the rule is saved, false when the human cancels (or no rule is offered).
 * `saveLabel` names the Save button.
 */
export function previewRule(title, draft, { saveLabel = t('rule-preview-save') } = {}) {
  return new Promise((resolve) => {
    const body = h('div', { class: 'rule-preview-body' }, h('p', { class: 'modal-text' }, t('rule-preview-drafting')));
    const error = h('p', { class: 'rule-preview-error', role: 'alert', hidden: true });
    const cancel = h('button', { type: 'button', class: 'button ghost rule-cancel' }, t('rule-preview-cancel'));
    const save = h('button', { type: 'button', class: 'button primary rule-save', disabled: true }, saveLabel);
    const modal = h('div', { class: 'modal-backdrop rule-preview' },
      h('div', { class: 'modal wide', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'rule-preview-title' },
        h('h2', { id: 'rule-preview-title' }, title),
        body, error,
        h('div', { class: 'modal-actions' }, cancel, save)));
    let text = null;
    let busy = false;

    // Focus stays in the preview while it is open: Tab never reaches the form behind it.
    const keepFocus = (e) => { if (!modal.contains(e.target)) (save.hidden || save.disabled ? cancel : save).focus(); };
    const close = (saved) => {
      document.removeEventListener('focusin', keepFocus);
      modal.remove();
      resolve(saved);
    };
    const fail = (e) => {
      error.textContent = errorText(e);
      error.hidden = false;
    };
    cancel.addEventListener('click', () => { if (!busy) close(false); });
    save.addEventListener('click', async () => {
      if (busy || text === null) return;
      busy = true;
      save.disabled = true;
      error.hidden = true;
      try {
        await api.saveRule(text);
        close(true);
      } catch (e) {
        fail(e);
        save.disabled = false;
      } finally {
        busy = false;
      }
    });
    // The window's own keys (digits pick options, Ctrl+Enter submits, Esc hides) stay outside.
    modal.addEventListener('keydown', (e) => {
      e.stopPropagation();
      if (e.key === 'Escape' && !busy) { e.preventDefault(); close(false); }
    });
    document.body.append(modal);
    document.addEventListener('focusin', keepFocus);
    cancel.focus();

    draft().then((view) => {
      if (!view.choices.length) {
        body.replaceChildren(h('p', { class: 'modal-text rule-unavailable' }, t('rule-preview-none', { why: view.unavailable })));
        cancel.textContent = t('rule-preview-close');
        save.hidden = true;
        return;
      }
      const offered = view.choices.filter((c) => c.toml);
      let choice = offered[0];
      const shadow = h('input', { type: 'checkbox', class: 'rule-shadow' });
      const toml = h('pre', { class: 'rule-toml' });
      const matches = h('div', { class: 'rule-matches' });
      const says = h('span');
      const show = () => {
        text = shadow.checked ? choice.shadowToml : choice.toml;
        toml.textContent = text;
        says.textContent = shadow.checked
          ? t('rule-preview-says-shadow')
          : t('rule-preview-says-on');
        matches.replaceChildren(pastMatches(choice));
      };
      const scopes = h('fieldset', { class: 'rule-scopes' }, h('legend', {}, t('rule-preview-scope')),
        view.choices.map((c) => {
          const input = h('input', { type: 'radio', name: 'rule-scope', value: c.scope, disabled: !c.toml, checked: c === choice });
          input.addEventListener('change', () => { choice = c; show(); });
          return h('label', { class: `rule-scope${c.toml ? '' : ' unavailable'}`, dataset: { scope: c.scope } },
            input,
            h('span', { class: 'rule-scope-title' }, c.title),
            c.toml ? h('span', { class: 'rule-scope-count' }, matchedCount(c)) : null,
            c.toml && c.parts.length ? h('span', { class: 'rule-scope-parts' }, c.parts.map((parts) => h('q', {},
              parts.map((p) => p.varies
                ? h('mark', { class: `varies ${p.varies}`, title: p.varies === 'number' ? t('rule-preview-any-number') : t('rule-preview-any-name') }, p.text)
                : p.text)))) : null,
            c.toml ? null : h('span', { class: 'rule-scope-why' }, t('rule-preview-not-offered', { why: c.unavailable })));
        }),
        h('label', { class: 'rule-shadow-choice' }, shadow, ' ', t('rule-preview-shadow-first')));
      shadow.addEventListener('change', show);
      body.replaceChildren(scopes, matches,
        h('p', { class: 'modal-text' }, says, ' ',
          t('rule-preview-path-before'), ' ', h('span', { class: 'mono rule-path' }, view.path), t('rule-preview-path-after')),
        toml);
      show();
      if (view.problem) fail({ message: t('rule-preview-file-problem', { problem: view.problem }) });
      save.disabled = false;
      save.focus();
    }, (e) => {
      body.replaceChildren();
      fail(e);
      cancel.textContent = t('rule-preview-close');
      save.hidden = true;
    });
  });
}

function matchedCount(choice) {
  return t('rule-preview-matched', { count: choice.matchedCount });
}

// The History entries the chosen scope would have matched, newest first.
function pastMatches(choice) {
  if (!choice.matchedCount) return h('p', { class: 'rule-matches-none' }, t('rule-preview-matched-none'));
  const more = choice.matchedCount - choice.matched.length;
  return h('div', {},
    h('p', { class: 'rule-matches-title' }, t('rule-preview-matched-title', { matched: matchedCount(choice) })),
    h('ul', { class: 'rule-matches-list' }, choice.matched.map((m) => h('li', { dataset: { entry: m.id } },
      h('span', { class: 'rule-match-when' }, when(m.askedAt)), ' ',
      h('span', { class: 'rule-match-question' }, m.question), ' ',
      h('span', { class: 'rule-match-who' }, m.by ? t('rule-preview-who-by', { who: m.who, by: m.by }) : m.who)))),
    more > 0 ? h('p', { class: 'rule-matches-more' }, t('rule-preview-more', { more })) : null);
}
