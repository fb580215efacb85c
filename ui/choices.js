// ui/choices.js: the person's app settings in the sidebar ("Notify only", "Show without focus"), read and kept through the backend.
import { api } from './bridge.js';

const notifyOnly = () => document.getElementById('notify-only');
const withoutFocus = () => document.getElementById('without-focus');

/** Shows the choices in force (`get_settings` or `set_choices`); "Notify only" fixed at start-up cannot be switched. */
export function showChoices(view) {
  notifyOnly().checked = view.notifyOnly;
  notifyOnly().disabled = view.notifyOnlyForced;
  notifyOnly().closest('label').title = view.notifyOnlyForced
    ? 'Set for this run by --notify-only or ASKDESK_NOTIFY_ONLY'
    : 'New questions raise a notification; the window opens only when you open it';
  withoutFocus().checked = view.withoutFocus;
}

/** Keeps a switched choice; when it cannot be kept, says so and shows what is in force. */
export function wireChoices(toast) {
  const keep = () => api.setChoices({ notifyOnly: notifyOnly().checked, withoutFocus: withoutFocus().checked })
    .then(showChoices)
    .catch((error) => {
      toast(`The setting was not kept: ${error.message || error}`, 'error');
      api.settings().then(showChoices).catch(() => {});
    });
  notifyOnly().addEventListener('change', keep);
  withoutFocus().addEventListener('change', keep);
}
