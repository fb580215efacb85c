// askdesk UI: the preview of a rule made from an answer ("Always answer this way here", "Make a rule"): the drafted rule's text, the file it goes to, Save / Cancel; errors stay in the preview.
import { api } from './bridge.js';
import { h } from './dom.js';

/**
 * Opens the preview of the rule `draft()` drafts (a promise of the backend's RuleDraftView).
 * Resolves true once the rule is saved, false when the human cancels (or no rule is offered).
 * `saveLabel` names the Save button.
 */
export function previewRule(title, draft, { saveLabel = 'Save rule' } = {}) {
  return new Promise((resolve) => {
    const body = h('div', { class: 'rule-preview-body' }, h('p', { class: 'modal-text' }, 'Drafting the rule…'));
    const error = h('p', { class: 'rule-preview-error', role: 'alert', hidden: true });
    const cancel = h('button', { type: 'button', class: 'button ghost rule-cancel' }, 'Cancel');
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
      error.textContent = (e && e.message) || String(e);
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
      if (!view.toml) {
        body.replaceChildren(h('p', { class: 'modal-text rule-unavailable' }, `No rule is offered: ${view.unavailable}.`));
        cancel.textContent = 'Close';
        save.hidden = true;
        return;
      }
      text = view.toml;
      body.replaceChildren(
        h('p', { class: 'modal-text' },
          'From now on, the same request from this project is answered this way without asking you. ',
          'The rule is added at the end of ', h('span', { class: 'mono rule-path' }, view.path), '.'),
        h('pre', { class: 'rule-toml' }, view.toml));
      if (view.problem) fail({ message: `The rules file has a problem, and saving will be refused until it is fixed: ${view.problem}` });
      save.disabled = false;
      save.focus();
    }, (e) => {
      body.replaceChildren();
      fail(e);
      cancel.textContent = 'Close';
      save.hidden = true;
    });
  });
}
