// askdesk UI: the only module that talks to the backend (Tauri commands and events).

const tauri = window.__TAURI__;

export function available() {
  return Boolean(tauri && tauri.core && tauri.event);
}

export function invoke(command, args = {}) {
  return tauri.core.invoke(command, args);
}

export function listen(event, handler) {
  return tauri.event.listen(event, (e) => handler(e.payload));
}

export const api = {
  queue: () => invoke('get_queue'),
  settings: () => invoke('get_settings'),
  catalogue: () => invoke('get_catalogue'),
  setLanguage: (language) => invoke('set_language', { language }),
  setChoices: (choices) => invoke('set_choices', { choices }),
  submit: (request, answer, comments = null) => invoke('submit', { request, answer, comments }),
  attachImage: (request, data) => invoke('attach_image', { request, data }),
  keptPicture: (request, picture) => invoke('kept_picture', { request, picture }),
  dismiss: (request) => invoke('dismiss', { request }),
  closeEnded: (request) => invoke('close_ended', { request }),
  setDnd: (on) => invoke('set_dnd', { on }),
  saveDraft: (request, draft) => invoke('save_draft', { request, draft }),
  setPastComment: (request, index, state) => invoke('set_past_comment', { request, index, state }),
  history: (query) => invoke('get_history', { query }),
  openLink: (url) => invoke('open_link', { url }),
  hide: () => invoke('hide_window'),
  shown: (request) => invoke('shown', { request }),
  viewed: (view) => invoke('viewed', { view }),
  draftRule: (request, answer) => invoke('draft_rule', { request, answer }),
  draftRuleFromHistory: (entry) => invoke('draft_rule_from_history', { entry }),
  saveRule: (text) => invoke('save_rule', { text }),
  rules: (counts) => invoke('get_rules', { counts }),
  openRulesFile: () => invoke('open_rules_file'),
  setRuleMode: (name, mode) => invoke('set_rule_mode', { name, mode }),
  holdDeadline: (request, held) => invoke('hold_deadline', { request, held }),
  notes: () => invoke('get_notes'),
  closeNote: (id) => invoke('close_note', { id }),
  connectView: () => invoke('get_connect'),
  previewConnect: (client, connect) => invoke('preview_connect', { client, connect }),
  applyConnect: (client, connect, diff) => invoke('apply_connect', { client, connect, diff }),
  setAutostart: (on) => invoke('set_autostart', { on }),
  phone: () => invoke('get_phone'),
  setPhone: (settings) => invoke('set_phone', { settings }),
  revokeDevice: (name) => invoke('revoke_device', { name }),
  allowPasskey: (name) => invoke('allow_passkey', { name }),
  addPhone: () => invoke('add_phone'),
  confirmPhone: (id, code) => invoke('confirm_phone', { id, code }),
  cancelPhone: (id) => invoke('cancel_phone', { id }),
};
