// askdesk UI: the Devices view: "Answer from your phone" (on/off, the address and port to listen
// on, an optional certificate), what a phone needs to trust the desk, the paired phones with
// Revoke, and "Add a phone" (the pairing QR, its countdown, the code to compare, Codes match /
// Cancel), and when a phone is woken (what its lock screen shows, quiet hours, only when this desk
// is idle). The backend (src-tauri `phone`) runs the remote and draws the QR codes.
import { api, listen } from './bridge.js';
import { h, when, errorText } from './dom.js';
import { t } from './l10n.js';

const SVG = 'http://www.w3.org/2000/svg';

/** What kind of network an address is on, in words. */
function kindOf(kind) {
  switch (kind) {
    case 'tailnet': return t('devices-kind-tailnet');
    case 'lan': return t('devices-kind-lan');
    case 'loopback': return t('devices-kind-loopback');
    default: return t('devices-kind-other');
  }
}

// The pairing the modal shows, and what it is waiting for.
let pairing = null;

listen('phone-claim', (claim) => { if (pairing && pairing.id === claim.id) pairing.claimed(claim); });

/** Renders the Devices view into `root`; `toast(text, kind)` reports results. */
export async function renderDevices(root, { toast }) {
  let view;
  try {
    view = await api.phone();
  } catch (error) {
    toast(t('devices-unavailable', { error: errorText(error) }), 'error');
    return null;
  }
  const refresh = () => renderDevices(root, { toast });
  root.replaceChildren(
    h('header', { class: 'history-head' }, h('h1', {}, t('devices-title'))),
    h('div', { class: 'devices-body' },
      settingsCard(view, refresh, toast),
      view.running && view.running.ownAuthority ? trustCard(view.running) : null,
      devicesCard(view, refresh, toast)));
  root.dataset.loaded = String(Number(root.dataset.loaded || 0) + 1);
  return view;
}

/** A QR code the backend drew: its dark modules as one SVG path. */
function qrCode(qr, label) {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${qr.size} ${qr.size}`);
  svg.setAttribute('class', 'qr');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  svg.setAttribute('shape-rendering', 'crispEdges');
  const back = document.createElementNS(SVG, 'rect');
  back.setAttribute('width', String(qr.size));
  back.setAttribute('height', String(qr.size));
  back.setAttribute('fill', '#fff');
  const dark = document.createElementNS(SVG, 'path');
  dark.setAttribute('d', qr.path);
  dark.setAttribute('fill', '#000');
  svg.append(back, dark);
  return svg;
}

function settingsCard(view, refresh, toast) {
  const s = view.settings;
  const enabled = h('input', { type: 'checkbox', id: 'phone-enabled' });
  enabled.checked = s.enabled;
  const chosen = s.address || (view.addresses.find((a) => a.kind === 'tailnet' || a.kind === 'lan') || {}).ip || '';
  const address = h('select', { id: 'phone-address' },
    h('option', { value: '' }, t('devices-choose-address')),
    view.addresses.map((a) => h('option', { value: a.ip }, t('devices-address', { ip: a.ip, kind: kindOf(a.kind), interface: a.interface }))));
  address.value = view.addresses.some((a) => a.ip === chosen) ? chosen : '';
  const port = h('input', { type: 'number', id: 'phone-port', min: '1', max: '65535', value: String(s.port) });
  const cert = h('input', { type: 'text', id: 'phone-cert', class: 'mono', placeholder: t('devices-cert-placeholder'), value: s.certificate || '' });
  const key = h('input', { type: 'text', id: 'phone-key', class: 'mono', placeholder: t('devices-key-placeholder'), value: s.key || '' });
  const wake = wakeFields(s);
  const save = async (on) => {
    const settings = {
      enabled: on,
      address: address.value || null,
      port: Number(port.value),
      certificate: cert.value.trim() || null,
      key: key.value.trim() || null,
      ...wake.settings(),
    };
    try {
      const now = await api.setPhone(settings);
      if (now.running) toast(t('devices-answering-at', { origin: now.running.origin }));
      else if (!on) toast(t('devices-answering-off'));
    } catch (error) {
      toast(t('not-changed', { error: errorText(error) }), 'error');
    }
    await refresh();
  };
  enabled.addEventListener('change', () => save(enabled.checked));
  const apply = h('button', { type: 'button', id: 'phone-apply', class: 'button small', onclick: () => save(enabled.checked) },
    s.enabled ? t('devices-apply') : t('devices-save'));
  let status = null;
  if (view.problem) status = h('p', { id: 'phone-problem', class: 'connect-problem', role: 'alert' }, view.problem);
  else if (view.running) status = h('p', { id: 'phone-status', class: 'phone-status' }, t('devices-serving'), ' ', h('span', { class: 'mono' }, view.running.origin));
  return h('section', { class: 'phone-settings card', id: 'phone-settings' },
    h('label', { class: 'connect-switch' }, enabled, h('span', {}, t('devices-enable'))),
    h('p', { class: 'muted' }, t('devices-enable-text')),
    h('div', { class: 'phone-fields' },
      h('label', {}, h('span', {}, t('devices-listen-on')), address),
      h('label', {}, h('span', {}, t('devices-port')), port),
      h('label', {}, h('span', {}, t('devices-cert')), cert),
      h('label', {}, h('span', {}, t('devices-key')), key)),
    h('p', { class: 'muted phone-hint' }, t('devices-address-hint')),
    wake.node,
    h('div', { class: 'connect-buttons' }, apply),
    status);
}

// When a subscribed phone is woken, and what its lock screen says (docs/remote.md, "Waking the
// phone"); saved with the rest by Apply.
function wakeFields(s) {
  const show = h('input', { type: 'checkbox', id: 'phone-show-questions' });
  show.checked = Boolean(s.showQuestions);
  const [from, to] = (s.quietHours || '').split('-');
  const quiet = h('input', { type: 'checkbox', id: 'phone-quiet' });
  quiet.checked = Boolean(s.quietHours);
  const quietFrom = h('input', { type: 'time', id: 'phone-quiet-from', value: from || '22:00' });
  const quietTo = h('input', { type: 'time', id: 'phone-quiet-to', value: to || '07:00' });
  const idle = h('input', { type: 'checkbox', id: 'phone-idle' });
  idle.checked = s.onlyWhenIdle != null;
  const minutes = h('input', { type: 'number', id: 'phone-idle-minutes', min: '0', max: '1440', value: String(s.onlyWhenIdle ?? 5) });
  const node = h('fieldset', { class: 'phone-wake', id: 'phone-wake' },
    h('legend', {}, t('devices-wake')),
    h('label', { class: 'phone-check' }, show, h('span', {}, t('devices-wake-show'))),
    h('label', { class: 'phone-check' }, quiet, h('span', {}, t('devices-quiet-from'), ' '), quietFrom,
      h('span', {}, ' ', t('devices-quiet-to'), ' '), quietTo),
    h('label', { class: 'phone-check' }, idle, h('span', {}, t('devices-idle-before'), ' '), minutes,
      h('span', {}, ' ', t('devices-idle-after'))),
    h('p', { class: 'muted phone-hint' }, t('devices-wake-hint')));
  return {
    node,
    settings: () => ({
      showQuestions: show.checked,
      quietHours: quiet.checked && quietFrom.value && quietTo.value ? `${quietFrom.value}-${quietTo.value}` : null,
      onlyWhenIdle: idle.checked ? Number(minutes.value) : null,
    }),
  };
}

function pushState(d) {
  if (d.push === 'on') return h('span', { class: 'muted device-push', dataset: { push: 'on' } }, t('devices-push-woken'));
  if (d.push === 'dropped') {
    return h('span', { class: 'connect-problem device-push', dataset: { push: 'dropped' } },
      t('devices-push-lost', { when: when(d.pushDroppedAt), status: d.pushDroppedStatus }));
  }
  return h('span', { class: 'muted device-push', dataset: { push: 'off' } }, t('devices-push-unsubscribed'));
}

// A phone's browser trusts the desk only once askdesk's own authority is installed on it.
function trustCard(running) {
  return h('section', { class: 'phone-trust card', id: 'phone-trust', role: 'note' },
    h('div', { class: 'phone-trust-text' },
      h('h2', {}, t('devices-trust-title')),
      h('p', {}, t('devices-trust-why')),
      h('p', {}, t('devices-trust-scan')),
      h('ul', {},
        h('li', {}, h('strong', {}, t('devices-trust-iphone')), ' ', t('devices-trust-iphone-steps')),
        h('li', {}, h('strong', {}, t('devices-trust-android')), ' ', t('devices-trust-android-steps'))),
      h('p', { class: 'mono muted' }, running.installUrl),
      h('p', { class: 'muted' }, t('devices-trust-own-cert'))),
    running.installQr ? qrCode(running.installQr, t('devices-trust-qr')) : null);
}

function devicesCard(view, refresh, toast) {
  const add = h('button', {
    type: 'button', id: 'add-phone', class: 'button primary small', disabled: !view.running || undefined,
    title: view.running ? t('devices-add-title') : t('devices-add-off-title'),
    onclick: () => addPhone(refresh, toast),
  }, t('devices-add'));
  const rows = view.devices.map((d) => h('li', { class: 'device', dataset: { device: d.name } },
    h('span', { class: 'device-name' }, d.name),
    h('span', { class: 'muted' }, t('devices-paired-at', { when: when(d.pairedAt) })),
    h('span', { class: 'muted' }, d.lastSeen ? t('devices-last-seen', { when: when(d.lastSeen) }) : t('devices-never-seen')),
    pushState(d),
    h('span', { class: 'muted' }, d.passkeyAllowed ? t('devices-passkey-allowed') : d.passkey ? t('devices-passkey') : t('devices-no-passkey')),
    h('button', {
      type: 'button', class: 'button ghost small', dataset: { action: 'allow-passkey' },
      title: t('devices-allow-passkey-title'),
      onclick: async () => {
        try {
          await api.allowPasskey(d.name);
          toast(t('devices-passkey-allowed-toast', { device: d.name }));
        } catch (error) {
          toast(t('devices-not-allowed', { error: errorText(error) }), 'error');
        }
        await refresh();
      },
    }, t('devices-allow-passkey')),
    h('button', {
      type: 'button', class: 'button ghost small', dataset: { action: 'revoke' },
      onclick: async () => {
        try {
          await api.revokeDevice(d.name);
          toast(t('devices-revoked-toast', { device: d.name }));
        } catch (error) {
          toast(t('devices-not-revoked', { error: errorText(error) }), 'error');
        }
        await refresh();
      },
    }, t('devices-revoke'))));
  return h('section', { class: 'devices card', id: 'devices' },
    h('div', { class: 'connect-top' }, h('h2', {}, t('devices-paired')), h('span', { class: 'connect-actions' }, add)),
    rows.length ? h('ol', { class: 'device-list', id: 'device-list' }, rows)
      : h('p', { class: 'muted', id: 'no-devices' }, t('devices-none-paired')));
}

// "Add a phone": the QR and its countdown; a phone's claim turns it into the code to compare.
async function addPhone(refresh, toast) {
  let offer;
  try {
    offer = await api.addPhone();
  } catch (error) {
    toast(t('devices-cannot-pair', { error: errorText(error) }), 'error');
    return;
  }
  const body = h('div', { class: 'pair-body' });
  const actions = h('div', { class: 'modal-actions' });
  const modal = h('div', { class: 'modal-backdrop', id: 'pair-modal' },
    h('div', { class: 'modal pair', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'pair-title' },
      h('h2', { id: 'pair-title' }, t('devices-add')), body, actions));
  let timer = null;
  const close = (cancel) => {
    clearInterval(timer);
    pairing = null;
    modal.remove();
    if (cancel) api.cancelPhone(offer.id).catch(() => {});
    refresh();
  };
  const cancel = h('button', { type: 'button', class: 'button ghost', id: 'pair-cancel', onclick: () => close(true) }, t('devices-cancel'));
  const ended = (message) => {
    clearInterval(timer);
    pairing = null; // a claim that comes after this is not shown: the offer is over at the desk
    body.replaceChildren(h('p', { class: 'connect-problem', role: 'alert', id: 'pair-ended' }, message));
    actions.replaceChildren(h('button', { type: 'button', class: 'button', id: 'pair-close', onclick: () => close(true) }, t('devices-close')));
  };
  const until = Date.now() + offer.seconds * 1000;
  const countdown = h('p', { class: 'pair-countdown muted', id: 'pair-countdown', 'aria-live': 'off' });
  const tick = () => {
    const left = Math.max(0, Math.ceil((until - Date.now()) / 1000));
    countdown.textContent = t('devices-valid-for', { time: `${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}` });
    if (!left) ended(t('devices-expired'));
  };
  body.replaceChildren(
    h('p', {}, t('devices-pair-scan')),
    qrCode(offer.qr, t('devices-pair-qr')),
    countdown);
  actions.replaceChildren(cancel);
  pairing = {
    id: offer.id,
    claimed: (claim) => {
      clearInterval(timer);
      const match = h('button', { type: 'button', class: 'button primary', id: 'pair-match' }, t('devices-codes-match'));
      match.addEventListener('click', async () => {
        match.disabled = true;
        try {
          const name = await api.confirmPhone(offer.id, claim.code);
          toast(t('devices-is-paired', { device: name }));
          close(false);
        } catch (error) {
          ended(t('devices-not-paired', { error: errorText(error) }));
        }
      });
      body.replaceChildren(
        h('p', {}, h('strong', { class: 'pair-name' }, claim.name), ' ', t('devices-asks-to-pair')),
        h('p', { class: 'pair-code mono', id: 'pair-code' }, `${claim.code.slice(0, 3)} ${claim.code.slice(3)}`),
        h('p', { class: 'muted' }, t('devices-codes-differ')));
      actions.replaceChildren(cancel, match);
      match.focus();
    },
  };
  document.body.append(modal);
  tick();
  timer = setInterval(tick, 1000);
  cancel.focus();
}
