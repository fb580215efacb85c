// ui/choices.js: the person's app settings in the sidebar ("Notify only", "Show without focus"), read and kept through the backend.
import { api } from './bridge.js';
import { t, useCatalogue } from './l10n.js';

const notifyOnly = () => document.getElementById('notify-only');
const withoutFocus = () => document.getElementById('without-focus');

/** Shows the choices in force (`get_settings` or `set_choices`); "Notify only" fixed at start-up cannot be switched. */
export function showChoices(view) {
  notifyOnly().checked = view.notifyOnly;
  notifyOnly().disabled = view.notifyOnlyForced;
  notifyOnly().closest('label').title = t(view.notifyOnlyForced ? 'notify-only-forced' : 'notify-only-title');
  withoutFocus().checked = view.withoutFocus;
}

/** Keeps a switched choice; when it cannot be kept, says so and shows what is in force. */
export function wireChoices(toast) {
  const keep = () => api.setChoices({ notifyOnly: notifyOnly().checked, withoutFocus: withoutFocus().checked })
    .then(showChoices)
    .catch((error) => {
      toast(t('setting-not-kept', { error: error.message || error }), 'error');
      api.settings().then(showChoices).catch(() => {});
    });
  notifyOnly().addEventListener('change', keep);
  withoutFocus().addEventListener('change', keep);
}

const language = () => document.getElementById('language');

/**
 * The language choice: "System" (the system's language, named) and each catalogue's language in its own words.
 * Until the person reaches for the list, it holds only the language in force: each language's name is written
 * in its own script, and the web engine measures every option of a closed list, so a window in English would
 * load a Chinese font (about 1 MB) for a name nobody looks at.
 */
export function showLanguages(view) {
  const system = view.languages.find((l) => l.id === view.system);
  const options = [['', t('language-system', { language: system ? system.name : view.system })],
    ...view.languages.map((l) => [l.id, l.name])];
  const chosen = view.chosen || '';
  const fill = (all) => {
    language().replaceChildren(...options.filter(([id]) => all || id === chosen).map(([id, name]) => {
      const option = document.createElement('option');
      option.value = id;
      option.textContent = name;
      return option;
    }));
    language().value = chosen;
  };
  fill(false);
  const reached = () => fill(true);
  language().addEventListener('pointerdown', reached, { once: true });
  language().addEventListener('focus', reached, { once: true });
  language().disabled = view.overridden;
  if (view.overridden) language().closest('label').title = t('language-fixed');
}

/** Keeps a language chosen and draws the page again in it (what is typed is kept by the backend's drafts). */
export function wireLanguage(toast) {
  language().addEventListener('change', () => api.setLanguage(language().value || null)
    .then((view) => { useCatalogue(view); window.location.reload(); })
    .catch((error) => toast(t('setting-not-kept', { error: error.message || error }), 'error')));
}
