// askdesk UI: "Connect your agents": each client's card (present, connected, the file it uses),
// Connect / Disconnect with the exact change shown as a diff before anything is written, what the
// client still needs afterwards, the snippet for other MCP clients (with Copy), and the "Start at
// login" switch.
// The backend (askdesk_connect::overview) decides every state and computes every diff.
import { api } from './bridge.js';
import { h, errorText } from './dom.js';
import { t } from './l10n.js';

/** A client's state as its card says it: the words and the pill's tone. */
function stateOf(client) {
  if (!client.present) return [t('connect-not-installed'), ''];
  switch (client.state) {
    case 'connected': return [t('connect-connected'), 'ok'];
    case 'outdated': return [t('connect-outdated'), 'warn'];
    case 'error': return [t('connect-error'), 'danger'];
    default: return [t('connect-not-connected'), ''];
  }
}

/** Renders the Connect view into `root`; `toast(text, kind)` reports results. */
export async function renderConnect(root, { toast }) {
  let view;
  try {
    view = await api.connectView();
  } catch (error) {
    toast(t('connect-unavailable', { error: errorText(error) }), 'error');
    return null;
  }
  const refresh = () => renderConnect(root, { toast });
  // Drawn again after a write: the list stays where the person had scrolled it.
  const scrolled = root.querySelector('.connect-body')?.scrollTop || 0;
  root.replaceChildren(
    h('header', { class: 'history-head' }, h('h1', {}, t('connect-title'))),
    h('div', { class: 'connect-body' },
      view.firstRun ? h('p', { class: 'connect-intro', dataset: { firstRun: 'true' } },
        t('connect-welcome')) : null,
      view.problem ? h('p', { class: 'connect-problem', role: 'alert' }, view.problem) : null,
      h('ol', { class: 'connect-list' }, view.clients.map((c) => clientCard(c, Boolean(view.problem), refresh, toast))),
      view.autostart ? autostartSwitch(view.autostart, refresh, toast) : null,
      view.snippet ? h('section', { class: 'connect-other card' },
        h('h2', {}, t('connect-other-title')),
        h('p', { class: 'muted' }, t('connect-other-text')),
        h('div', { class: 'connect-snippet-box' },
          h('pre', { class: 'connect-snippet mono' }, view.snippet),
          copyButton(view.snippet, toast))) : null));
  root.querySelector('.connect-body').scrollTop = scrolled;
  root.dataset.loaded = String(Number(root.dataset.loaded || 0) + 1);
  return view;
}

/** A Copy button for `text`: the system clipboard, then "Copied" on the button for a moment. */
function copyButton(text, toast) {
  const button = h('button', { type: 'button', class: 'button small connect-copy' }, t('connect-copy'));
  let reset = null;
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Without the asynchronous clipboard, the text is selected and copied as Ctrl+C would.
      const box = h('textarea', { class: 'offscreen', readonly: true }, text);
      document.body.append(box);
      box.select();
      const copied = document.execCommand('copy');
      box.remove();
      button.focus();
      if (!copied) { toast(t('connect-not-copied'), 'warn'); return; }
    }
    button.textContent = t('connect-copied');
    clearTimeout(reset);
    reset = setTimeout(() => { button.textContent = t('connect-copy'); }, 2000);
  });
  return button;
}

function clientCard(client, disabled, refresh, toast) {
  const [label, tone] = stateOf(client);
  const connected = client.state === 'connected' || client.state === 'outdated';
  const detail = h('div', { class: 'connect-detail' });
  const button = (text, connect, primary) => h('button', {
    type: 'button', class: `button small${primary ? ' primary' : ''}`, disabled: disabled || undefined,
    dataset: { action: connect ? 'connect' : 'disconnect' },
    onclick: () => preview(client, connect, detail, refresh, toast),
  }, text);
  const actions = [];
  if (client.state === 'outdated') actions.push(button(t('connect-update'), true, true));
  else if (!connected && client.present) actions.push(button(t('connect-connect'), true, true));
  if (connected) actions.push(button(t('connect-disconnect'), false, false));
  return h('li', { class: `connect-client card state-${client.state}${client.present ? '' : ' absent'}`, dataset: { client: client.client, state: client.state } },
    h('div', { class: 'connect-top' },
      h('span', { class: 'connect-name' }, client.label),
      h('span', { class: `pill connect-state ${tone}` }, label),
      h('span', { class: 'connect-via muted' }, client.via === 'hook' ? t('connect-via-hook') : t('connect-via-mcp')),
      h('span', { class: 'connect-actions' }, actions)),
    h('div', { class: 'connect-file mono muted' }, client.present ? client.file : t('connect-install-first', { folder: client.folder, client: client.label })),
    client.present && client.detail ? h('div', { class: 'connect-state-detail muted' }, client.detail) : null,
    detail);
}

// Shows the change as a diff with "Write this change" / "Cancel"; nothing is written before.
async function preview(client, connect, detail, refresh, toast) {
  let change;
  try {
    change = await api.previewConnect(client.client, connect);
  } catch (error) {
    detail.replaceChildren(h('p', { class: 'connect-problem', role: 'alert' }, errorText(error)));
    return;
  }
  if (!change.diff) {
    detail.replaceChildren(h('p', { class: 'muted' }, t('connect-unchanged', { file: change.file })));
    return;
  }
  const write = h('button', { type: 'button', class: 'button primary small', dataset: { action: 'write' } }, t('connect-write'));
  const cancel = h('button', { type: 'button', class: 'button ghost small', dataset: { action: 'cancel' } }, t('connect-cancel'));
  cancel.addEventListener('click', () => detail.replaceChildren());
  write.addEventListener('click', async () => {
    write.disabled = true;
    try {
      const done = await api.applyConnect(client.client, connect, change.diff);
      toast(done.message);
      await refresh();
      const card = document.querySelector(`.connect-client[data-client="${client.client}"]`);
      if (card) {
        card.querySelector('.connect-detail').replaceChildren(applied(done));
        keepInView(card);
      }
    } catch (error) {
      write.disabled = false;
      detail.querySelector('.connect-problem')?.remove();
      detail.prepend(h('p', { class: 'connect-problem', role: 'alert' }, errorText(error)));
    }
  });
  detail.replaceChildren(
    h('p', { class: 'connect-diff-title' },
      connect ? t('connect-diff-connecting', { file: change.file }) : t('connect-diff-disconnecting', { file: change.file })),
    h('pre', { class: 'connect-diff mono' }, change.diff.split('\n').filter((l, i, all) => l || i < all.length - 1).map(diffLine)),
    h('div', { class: 'connect-buttons' }, cancel, write));
  write.focus({ preventScroll: true });
  keepInView(detail.closest('.connect-client'));
}

// Scrolls the list so that the card's end shows, but never so far that its name (which client the
// change is for) leaves the view.
function keepInView(card) {
  card.scrollIntoView({ block: 'nearest' });
  card.querySelector('.connect-top').scrollIntoView({ block: 'nearest' });
}

function diffLine(line) {
  const kind = line.startsWith('+++') || line.startsWith('---') ? 'file'
    : line.startsWith('@@') ? 'hunk' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'ctx';
  return h('span', { class: `diff-line ${kind}` }, line, '\n');
}

function applied(done) {
  return h('div', { class: 'connect-done', role: 'status' },
    h('p', {}, done.message),
    done.backup ? h('p', { class: 'muted' }, t('connect-backup', { file: done.backup })) : null,
    done.next.length ? h('div', {},
      h('p', { class: 'connect-next-title' }, t('connect-next')),
      h('ul', { class: 'connect-next' }, done.next.map((step) => h('li', {}, step)))) : null);
}

function autostartSwitch(autostart, refresh, toast) {
  const box = h('input', { type: 'checkbox', id: 'autostart' });
  box.checked = autostart.enabled;
  box.disabled = !autostart.available;
  box.addEventListener('change', async () => {
    try {
      const now = await api.setAutostart(box.checked);
      toast(now.enabled ? t('connect-autostart-on') : t('connect-autostart-off'));
    } catch (error) {
      toast(t('not-changed', { error: errorText(error) }), 'error');
    }
    await refresh();
  });
  return h('section', { class: 'connect-autostart card' },
    h('label', { class: 'connect-switch' }, box, h('span', {}, t('connect-autostart'))),
    h('p', { class: 'muted' },
      autostart.available ? t('connect-autostart-available') : t('connect-autostart-from-source')));
}
