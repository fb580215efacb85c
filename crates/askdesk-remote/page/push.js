// The phone page's Web Push subscription (docs/remote.md, "Waking the phone"): once the desk has
// welcomed the paired phone, it subscribes with the desk's VAPID key and sends the subscription to
// the desk, signed with the device key. A browser with no push service, or one that never answers,
// is given up after a while with a quiet line under the header: the page works on without it.

import { t } from './l10n.js';

/** How long the browser's push service may take to subscribe before the page gives up. */
const SUBSCRIBE_WITHIN_MS = 10000;

let started = false;

/** The quiet line under the header, made on first use. */
function line() {
  let el = document.getElementById('push');
  if (!el) {
    el = document.createElement('p');
    el.id = 'push';
    el.className = 'push-note muted';
    el.setAttribute('role', 'status');
    document.getElementById('main').before(el);
  }
  return el;
}

function say(text, state) {
  const el = line();
  el.replaceChildren(text);
  el.dataset.state = state;
}

function within(promise, ms) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(t('phone-push-no-answer'))), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * Subscribes this phone for the desk's notices, once per page load: `device` is the paired
 * device ({ privateKey, publicKey }), `sign(key, value)` signs canonical JSON, `unb64u` decodes
 * base64url. Where the browser still has to ask the person, a button asks first.
 */
export function subscribePush({ device, sign, unb64u }) {
  if (started) return;
  started = true;
  if (!('serviceWorker' in navigator) || !('PushManager' in window) || !('Notification' in window)) {
    say(t('phone-push-unsupported'), 'unsupported');
    return;
  }
  const go = () => subscribe(device, sign, unb64u).catch((e) => {
    say(t('phone-push-failed', { reason: e.message }), 'failed');
  });
  if (Notification.permission === 'granted') {
    go();
  } else if (Notification.permission === 'denied') {
    say(t('phone-push-denied'), 'denied');
  } else {
    const button = document.createElement('button');
    button.type = 'button';
    button.id = 'push-allow';
    button.className = 'button small';
    button.textContent = t('phone-push-allow');
    button.addEventListener('click', async () => {
      button.disabled = true;
      const answer = await Notification.requestPermission();
      if (answer === 'granted') go();
      else say(t('phone-push-denied'), 'denied');
    });
    line().replaceChildren(button);
  }
}

async function subscribe(device, sign, unb64u) {
  say(t('phone-push-setting-up'), 'pending');
  const keyResponse = await fetch('/push/key');
  if (!keyResponse.ok) throw new Error(t('phone-push-no-key', { status: keyResponse.status }));
  const { publicKey } = await keyResponse.json();
  const registration = await within(navigator.serviceWorker.ready, SUBSCRIBE_WITHIN_MS);
  const options = { userVisibleOnly: true, applicationServerKey: unb64u(publicKey) };
  let subscription;
  try {
    subscription = await within(registration.pushManager.subscribe(options), SUBSCRIBE_WITHIN_MS);
  } catch (e) {
    // A subscription made for another key (the desk's key was made anew) is replaced.
    if (e.name !== 'InvalidStateError') throw e;
    const old = await registration.pushManager.getSubscription();
    if (old) await old.unsubscribe();
    subscription = await within(registration.pushManager.subscribe(options), SUBSCRIBE_WITHIN_MS);
  }
  const made = subscription.toJSON();
  const value = { endpoint: made.endpoint, keys: { auth: made.keys.auth, p256dh: made.keys.p256dh } };
  const signature = await sign(device.privateKey,
    { kind: 'askdesk/push-subscription', origin: location.origin, subscription: value, v: 1 });
  const response = await fetch('/push/subscription', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ publicKey: device.publicKey, subscription: value, signature }),
  });
  if (response.status !== 204) {
    const body = await response.json().catch(() => ({}));
    throw new Error(t('phone-push-refused', { reason: body.error || response.status }));
  }
  say(t('phone-push-on'), 'on');
}
