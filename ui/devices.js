// askdesk UI: the Devices view: "Answer from your phone" (on/off, the address and port to listen
// on, an optional certificate), what a phone needs to trust the desk, the paired phones with
// Revoke, and "Add a phone" (the pairing QR, its countdown, the code to compare, Codes match /
// Cancel), and when a phone is woken (what its lock screen shows, quiet hours, only when this desk
// is idle). The backend (src-tauri `phone`) runs the remote and draws the QR codes.
import { api, listen } from './bridge.js';
import { h } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const KINDS = { tailnet: 'tailnet', lan: 'LAN', loopback: 'this computer only', other: 'other network' };

// The pairing the modal shows, and what it is waiting for.
let pairing = null;

listen('phone-claim', (claim) => { if (pairing && pairing.id === claim.id) pairing.claimed(claim); });

/** Renders the Devices view into `root`; `toast(text, kind)` reports results. */
export async function renderDevices(root, { toast }) {
  let view;
  try {
    view = await api.phone();
  } catch (error) {
    toast(`Devices unavailable: ${(error && error.message) || error}`, 'error');
    return null;
  }
  const refresh = () => renderDevices(root, { toast });
  root.replaceChildren(
    h('header', { class: 'history-head' }, h('h1', {}, 'Devices')),
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
    h('option', { value: '' }, 'Choose an address…'),
    view.addresses.map((a) => h('option', { value: a.ip }, `${a.ip} — ${KINDS[a.kind]} (${a.interface})`)));
  address.value = view.addresses.some((a) => a.ip === chosen) ? chosen : '';
  const port = h('input', { type: 'number', id: 'phone-port', min: '1', max: '65535', value: String(s.port) });
  const cert = h('input', { type: 'text', id: 'phone-cert', class: 'mono', placeholder: 'askdesk’s own authority', value: s.certificate || '' });
  const key = h('input', { type: 'text', id: 'phone-key', class: 'mono', placeholder: 'with your certificate only', value: s.key || '' });
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
      if (now.running) toast(`Phones can answer at ${now.running.origin}.`);
      else if (!on) toast('Phones can no longer answer.');
    } catch (error) {
      toast(`Not changed: ${(error && error.message) || error}`, 'error');
    }
    await refresh();
  };
  enabled.addEventListener('change', () => save(enabled.checked));
  const apply = h('button', { type: 'button', id: 'phone-apply', class: 'button small', onclick: () => save(enabled.checked) },
    s.enabled ? 'Apply' : 'Save');
  let status = null;
  if (view.problem) status = h('p', { id: 'phone-problem', class: 'connect-problem', role: 'alert' }, view.problem);
  else if (view.running) status = h('p', { id: 'phone-status', class: 'phone-status' }, 'Serving phones at ', h('span', { class: 'mono' }, view.running.origin));
  return h('section', { class: 'phone-settings card', id: 'phone-settings' },
    h('label', { class: 'connect-switch' }, enabled, h('span', {}, 'Answer from your phone')),
    h('p', { class: 'muted' }, 'Paired phones see the questions waiting here and may answer them, over your own network only: nothing goes through anyone else’s server. Permission prompts stay at the desk.'),
    h('div', { class: 'phone-fields' },
      h('label', {}, h('span', {}, 'Listen on'), address),
      h('label', {}, h('span', {}, 'Port'), port),
      h('label', {}, h('span', {}, 'Certificate (PEM)'), cert),
      h('label', {}, h('span', {}, 'Its key (PEM)'), key)),
    h('p', { class: 'muted phone-hint' }, 'A tailnet address reaches your phone wherever it is and admits only your devices; a LAN address, everything on that network. askdesk never listens on every interface.'),
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
    h('legend', {}, 'Waking the phone'),
    h('label', { class: 'phone-check' }, show, h('span', {}, 'Show the question on the lock screen (text and choices only; otherwise “An agent is waiting”)')),
    h('label', { class: 'phone-check' }, quiet, h('span', {}, 'Quiet hours from '), quietFrom, h('span', {}, ' to '), quietTo),
    h('label', { class: 'phone-check' }, idle, h('span', {}, 'Only when this desk is locked or idle for '), minutes, h('span', {}, ' minutes')),
    h('p', { class: 'muted phone-hint' }, 'Permission prompts never show their content on the lock screen. Where this desk cannot tell whether you are at it, the phone is woken.'));
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
  if (d.push === 'on') return h('span', { class: 'muted device-push', dataset: { push: 'on' } }, 'woken by notifications');
  if (d.push === 'dropped') {
    return h('span', { class: 'connect-problem device-push', dataset: { push: 'dropped' } },
      `notifications dropped by its push service ${when(d.pushDroppedAt)} (${d.pushDroppedStatus}): open the page on the phone to turn them on again`);
  }
  return h('span', { class: 'muted device-push', dataset: { push: 'off' } }, 'not subscribed to notifications');
}

// A phone's browser trusts the desk only once askdesk's own authority is installed on it.
function trustCard(running) {
  return h('section', { class: 'phone-trust card', id: 'phone-trust', role: 'note' },
    h('div', { class: 'phone-trust-text' },
      h('h2', {}, 'Your phone does not trust this desk yet'),
      h('p', {}, 'This desk’s certificate comes from askdesk’s own authority, which no phone trusts until you install it. Until then the phone’s browser warns about the page and cannot pair.'),
      h('p', {}, 'Scan this code with the phone, accept the warning once, and download the certificate from the page it opens:'),
      h('ul', {},
        h('li', {}, h('strong', {}, 'iPhone: '), 'install the downloaded profile in Settings, then turn on full trust in Settings → General → About → Certificate Trust Settings.'),
        h('li', {}, h('strong', {}, 'Android: '), 'Settings → Security → Encryption & credentials → Install a certificate → CA certificate.')),
      h('p', { class: 'mono muted' }, running.installUrl),
      h('p', { class: 'muted' }, 'With a certificate of your own (tailscale cert, your domain) there is nothing to install.')),
    running.installQr ? qrCode(running.installQr, 'QR code of the page that installs askdesk’s authority') : null);
}

function when(millis) {
  return new Date(millis).toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
}

function devicesCard(view, refresh, toast) {
  const add = h('button', {
    type: 'button', id: 'add-phone', class: 'button primary small', disabled: !view.running || undefined,
    title: view.running ? 'Show a QR code for the phone’s camera' : 'Turn on “Answer from your phone” first',
    onclick: () => addPhone(refresh, toast),
  }, 'Add a phone');
  const rows = view.devices.map((d) => h('li', { class: 'device', dataset: { device: d.name } },
    h('span', { class: 'device-name' }, d.name),
    h('span', { class: 'muted' }, `paired ${when(d.pairedAt)}`),
    h('span', { class: 'muted' }, d.lastSeen ? `last seen ${when(d.lastSeen)}` : 'never connected'),
    pushState(d),
    h('span', { class: 'muted' }, d.passkeyAllowed ? 'may add a passkey now' : d.passkey ? 'passkey' : 'no passkey'),
    h('button', {
      type: 'button', class: 'button ghost small', dataset: { action: 'allow-passkey' },
      title: 'Let this phone register a passkey (its fingerprint, face or PIN) in the next 5 minutes: it needs one to allow permission prompts',
      onclick: async () => {
        try {
          await api.allowPasskey(d.name);
          toast(`${d.name} may add a passkey in the next 5 minutes.`);
        } catch (error) {
          toast(`Not allowed: ${(error && error.message) || error}`, 'error');
        }
        await refresh();
      },
    }, 'Allow a passkey'),
    h('button', {
      type: 'button', class: 'button ghost small', dataset: { action: 'revoke' },
      onclick: async () => {
        try {
          await api.revokeDevice(d.name);
          toast(`${d.name} can no longer answer.`);
        } catch (error) {
          toast(`Not revoked: ${(error && error.message) || error}`, 'error');
        }
        await refresh();
      },
    }, 'Revoke')));
  return h('section', { class: 'devices card', id: 'devices' },
    h('div', { class: 'connect-top' }, h('h2', {}, 'Paired phones'), h('span', { class: 'connect-actions' }, add)),
    rows.length ? h('ol', { class: 'device-list', id: 'device-list' }, rows)
      : h('p', { class: 'muted', id: 'no-devices' }, 'No phone is paired.'));
}

// "Add a phone": the QR and its countdown; a phone's claim turns it into the code to compare.
async function addPhone(refresh, toast) {
  let offer;
  try {
    offer = await api.addPhone();
  } catch (error) {
    toast(`Cannot pair now: ${(error && error.message) || error}`, 'error');
    return;
  }
  const body = h('div', { class: 'pair-body' });
  const actions = h('div', { class: 'modal-actions' });
  const modal = h('div', { class: 'modal-backdrop', id: 'pair-modal' },
    h('div', { class: 'modal pair', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'pair-title' },
      h('h2', { id: 'pair-title' }, 'Add a phone'), body, actions));
  let timer = null;
  const close = (cancel) => {
    clearInterval(timer);
    pairing = null;
    modal.remove();
    if (cancel) api.cancelPhone(offer.id).catch(() => {});
    refresh();
  };
  const cancel = h('button', { type: 'button', class: 'button ghost', id: 'pair-cancel', onclick: () => close(true) }, 'Cancel');
  const ended = (message) => {
    clearInterval(timer);
    pairing = null; // a claim that comes after this is not shown: the offer is over at the desk
    body.replaceChildren(h('p', { class: 'connect-problem', role: 'alert', id: 'pair-ended' }, message));
    actions.replaceChildren(h('button', { type: 'button', class: 'button', id: 'pair-close', onclick: () => close(true) }, 'Close'));
  };
  const until = Date.now() + offer.seconds * 1000;
  const countdown = h('p', { class: 'pair-countdown muted', id: 'pair-countdown', 'aria-live': 'off' });
  const tick = () => {
    const left = Math.max(0, Math.ceil((until - Date.now()) / 1000));
    countdown.textContent = `Valid for ${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}`;
    if (!left) ended('The code expired before a phone used it. Start again with “Add a phone”.');
  };
  body.replaceChildren(
    h('p', {}, 'Open the camera on your phone and point it at this code. Only a phone that scans it here can pair.'),
    qrCode(offer.qr, 'QR code of the pairing address'),
    countdown);
  actions.replaceChildren(cancel);
  pairing = {
    id: offer.id,
    claimed: (claim) => {
      clearInterval(timer);
      const match = h('button', { type: 'button', class: 'button primary', id: 'pair-match' }, 'Codes match');
      match.addEventListener('click', async () => {
        match.disabled = true;
        try {
          const name = await api.confirmPhone(offer.id, claim.code);
          toast(`${name} is paired.`);
          close(false);
        } catch (error) {
          ended(`Not paired: ${(error && error.message) || error}`);
        }
      });
      body.replaceChildren(
        h('p', {}, h('strong', { class: 'pair-name' }, claim.name), ' asks to pair. Does the phone show this code?'),
        h('p', { class: 'pair-code mono', id: 'pair-code' }, `${claim.code.slice(0, 3)} ${claim.code.slice(3)}`),
        h('p', { class: 'muted' }, 'If the codes differ, press Cancel: another phone may have scanned the QR code.'));
      actions.replaceChildren(cancel, match);
      match.focus();
    },
  };
  document.body.append(modal);
  tick();
  timer = setInterval(tick, 1000);
  cancel.focus();
}
