// The phone page's passkeys and permission prompts: registering this phone's passkey while the
// desk allows it, and the permission prompt's card (the whole command, escaped as the rest of the
// page escapes agents' text, its head and tail when long, the working directory, agent and tool,
// the countdown of a running deadline;
// desk-only prompts read-only with the desk's reason; a prompt of several questions answered
// whole). Deny is sent signed like any answer; any other choice asks the desk for a passkey
// challenge bound to that exact answer and sends the assertion with it (docs/remote.md,
// "Passkeys"). app.js hands in its helpers through `passkeys`.

import { t } from './l10n.js';

/** A command longer than this many lines or characters is shown as its head and tail. */
const LONG_LINES = 12;
const LONG_CHARS = 800;
const HEAD_LINES = 6;
const TAIL_LINES = 4;
const HEAD_CHARS = 400;
const TAIL_CHARS = 300;

/** Drops null and undefined members, which WebIDL dictionaries refuse. */
function clean(value) {
  if (Array.isArray(value)) return value.map(clean);
  if (value && typeof value === 'object' && !(value instanceof Uint8Array)) {
    const out = {};
    for (const [k, v] of Object.entries(value)) if (v != null) out[k] = clean(v);
    return out;
  }
  return value;
}

/**
 * The passkey part of the page. `ui` is app.js's: { h, b64u, unb64u, setNote, displayLabel, hhmm,
 * answer(card, value, comments, withPasskey), send(message), form(question) -> { node, answer(),
 * comments?() }, countdown() -> node }. Returns { state(passkey),
 * receive(message) -> handled, card(card) -> node }.
 */
export function passkeys(ui) {
  const { h, b64u, unb64u, setNote, displayLabel } = ui;
  let known = { available: false, registered: false, allowed: false };
  /** Replies awaited from the desk, by what they answer: 'register', 'credential', 'challenge:<id>'. */
  const waiting = new Map();

  function wait(key) {
    return new Promise((resolve, reject) => waiting.set(key, { resolve, reject }));
  }

  function settle(key, ok, value) {
    const waiter = waiting.get(key);
    if (!waiter) return;
    waiting.delete(key);
    if (ok) waiter.resolve(value); else waiter.reject(new Error(value));
  }

  // --- registering ---

  function banner() {
    const shown = document.getElementById('passkey-card');
    // A card that says a registration ended stays until the desk allows another.
    if (shown && shown.dataset.done && !known.allowed) return;
    shown?.remove();
    const list = document.getElementById('requests');
    if (!list || !known.available || !known.allowed) return;
    const button = h('button', { id: 'passkey-register', type: 'button', class: 'button primary big' },
      t(known.registered ? 'phone-passkey-replace' : 'phone-passkey-add'));
    const note = h('p', { class: 'note', role: 'status', hidden: true });
    button.addEventListener('click', async () => {
      button.disabled = true;
      note.hidden = false;
      note.className = 'note pending';
      note.textContent = t('phone-passkey-waiting');
      try {
        await register();
        note.className = 'note sent';
        note.textContent = t('phone-passkey-added');
        button.hidden = true;
        note.closest('#passkey-card').dataset.done = 'yes';
      } catch (e) {
        note.className = 'note error';
        note.textContent = t('phone-passkey-failed', { reason: e.message });
        button.disabled = false;
      }
    });
    list.before(h('section', { id: 'passkey-card', class: 'card passkey' },
      h('h2', {}, t('phone-passkey-title')),
      h('p', {}, t('phone-passkey-text')),
      button, note));
  }

  async function register() {
    const options = wait('register');
    ui.send({ type: 'passkey-register' });
    const { publicKey } = clean((await options).options);
    const created = await navigator.credentials.create({ publicKey: {
      ...publicKey,
      challenge: unb64u(publicKey.challenge),
      user: { ...publicKey.user, id: unb64u(publicKey.user.id) },
      excludeCredentials: (publicKey.excludeCredentials || []).map((c) => ({ ...c, id: unb64u(c.id) })),
    } });
    const done = wait('credential');
    ui.send({ type: 'passkey-credential', credential: {
      id: created.id,
      rawId: b64u(created.rawId),
      type: created.type,
      response: {
        clientDataJSON: b64u(created.response.clientDataJSON),
        attestationObject: b64u(created.response.attestationObject),
      },
    } });
    await done;
  }

  // --- allowing ---

  /**
   * The passkey's assertion for allowing `card`'s request with `intent` ({ nonce, answer,
   * comments }): the desk binds its challenge to that answer's digest.
   */
  async function assert(card, intent) {
    const id = card.wire.id;
    const options = wait(`challenge:${id}`);
    ui.send({ type: 'passkey-challenge', id, ...intent });
    const { publicKey } = clean((await options).options);
    setNote(card, t('phone-passkey-waiting'), 'pending');
    const got = await navigator.credentials.get({ publicKey: {
      ...publicKey,
      challenge: unb64u(publicKey.challenge),
      allowCredentials: (publicKey.allowCredentials || []).map((c) => ({ ...c, id: unb64u(c.id) })),
    } });
    setNote(card, t('phone-sending'), 'pending');
    return {
      id: got.id,
      rawId: b64u(got.rawId),
      type: got.type,
      response: {
        authenticatorData: b64u(got.response.authenticatorData),
        clientDataJSON: b64u(got.response.clientDataJSON),
        signature: b64u(got.response.signature),
        userHandle: got.response.userHandle ? b64u(got.response.userHandle) : null,
      },
    };
  }

  // --- the permission prompt's card ---

  /** The command as shown: whole, or its head and tail with the whole behind a tap. */
  function command(text) {
    const lines = text.split('\n');
    const whole = h('pre', { class: 'command whole' }, text);
    if (lines.length <= LONG_LINES && text.length <= LONG_CHARS) return whole;
    const head = lines.slice(0, HEAD_LINES).join('\n').slice(0, HEAD_CHARS);
    const tail = lines.slice(-TAIL_LINES).join('\n').slice(-TAIL_CHARS);
    const hidden = text.length - head.length - tail.length;
    const short = h('pre', { class: 'command short' }, head, h('span', { class: 'elided' }, `\n${t('phone-command-more', { hidden })}\n`), tail);
    whole.hidden = true;
    const toggle = h('button', { type: 'button', class: 'button small show-command', 'aria-expanded': 'false' },
      t('phone-command-whole', { lines: lines.length }));
    toggle.addEventListener('click', () => {
      const open = whole.hidden;
      whole.hidden = !open;
      short.hidden = open;
      toggle.setAttribute('aria-expanded', String(open));
      toggle.textContent = open ? t('phone-command-short') : t('phone-command-whole', { lines: lines.length });
    });
    return h('div', { class: 'command-box' }, short, whole, toggle);
  }

  function fact(name, value) {
    if (value == null || value === '') return null;
    return [h('dt', {}, name), h('dd', { class: 'mono' }, typeof value === 'string' ? value : JSON.stringify(value))];
  }

  /**
   * Whether an answer allows (needs the passkey): anything but choosing only denying options, as
   * the desk judges it (askdesk_remote::risk::Risk::approves); the desk decides either way.
   */
  function allows(value, deny) {
    return value.answers.some((item) => item.custom != null || item.selected.some((label) => !deny.has(label)));
  }

  /**
   * A prompt of several questions (`AskUserQuestion` through the hook): every question answered in
   * its own form, the whole batch sent at once (the desk checks it whole), with the passkey
   * unless it only denies; Dismiss needs none.
   */
  function batch(c, questions, deny) {
    const forms = questions.map(ui.form);
    c.forms = forms;
    const send = h('button', { type: 'button', class: 'button primary big send' }, t('phone-send'));
    const dismiss = h('button', { type: 'button', class: 'button big dismiss' }, t('phone-dismiss'));
    send.addEventListener('click', () => {
      const value = { answers: forms.map((f) => f.answer()) };
      const comments = forms.flatMap((f) => (f.comments ? f.comments() : []));
      ui.answer(c, value, comments, allows(value, deny) ? (intent) => assert(c, intent) : null);
    });
    dismiss.addEventListener('click', () => ui.answer(c, null));
    return [...forms.map((f) => f.node), h('div', { class: 'actions' }, send, dismiss)];
  }

  /** A permission prompt's card; Deny is sent as is, any other choice with the passkey. */
  function card(c) {
    const view = c.wire.view || {};
    const meta = (c.wire.agent && c.wire.agent.meta) || {};
    const risk = c.wire.risk || {};
    const questions = view.questions || [];
    const q = questions[0] || { options: [] };
    const several = questions.length > 1;
    const deny = new Set(risk.deny || []);
    const standing = new Set(risk.standing || []);
    const note = h('p', { class: 'note', role: 'status', hidden: true });
    let actions;
    if (risk.deskOnly) {
      actions = h('p', { class: 'desk-only' }, t('phone-desk-only', { reason: risk.deskOnly }));
    } else if (several) {
      actions = batch(c, questions, deny);
    } else {
      actions = h('div', { class: 'actions permission-actions' }, q.options.map((o) => {
        const denying = deny.has(o.label);
        const why = standing.has(o.label) ? t('phone-only-at-desk')
          : denying ? null
            : !known.available ? t('phone-passkey-needs-name')
              : !known.registered ? t('phone-passkey-needed') : null;
        const button = h('button', {
          type: 'button',
          class: `button big ${denying ? 'deny' : 'allow primary'}`,
          'data-label': o.label,
          disabled: why != null,
          'data-locked': why != null,
        }, displayLabel(o.label), why ? h('span', { class: 'option-desc' }, ` (${why})`) : null);
        button.addEventListener('click', () => {
          const value = { answers: [{ id: q.id, selected: [o.label] }] };
          ui.answer(c, value, [], denying ? null : (intent) => assert(c, intent));
        });
        return button;
      }));
    }
    return h('article', { class: 'card request permission', 'data-id': c.wire.id },
      h('div', { class: 'card-head' },
        h('span', { class: 'who' }, view.who || (c.wire.agent && c.wire.agent.id) || t('phone-an-agent')),
        view.project ? h('span', { class: 'project' }, view.project) : null,
        h('span', { class: 'when' }, view.askedAt ? ui.hhmm(new Date(view.askedAt)) : ''), ui.countdown()),
      several && !risk.deskOnly ? null
        : questions.length ? questions.map((x) => h('h2', { class: 'question-text' }, x.question))
          : h('h2', { class: 'question-text' }, t('phone-permission-prompt')),
      h('dl', { class: 'facts' }, fact(t('phone-fact-tool'), meta.tool), fact(t('phone-fact-agent'), view.who || (c.wire.agent && c.wire.agent.id)),
        fact(t('phone-fact-cwd'), meta.cwd), fact(t('phone-fact-path'), meta.path),
        typeof meta.command === 'string' ? null : fact(t('phone-fact-command'), meta.command)),
      typeof meta.command === 'string' ? command(meta.command) : null,
      actions, note);
  }

  return {
    state(passkey) {
      if (passkey) known = passkey;
      banner();
    },
    /** Handles the desk's passkey messages; false for any other. */
    receive(message) {
      switch (message.type) {
        case 'passkey':
          this.state(message.passkey);
          return true;
        case 'passkey-creation':
          settle('register', true, message);
          return true;
        case 'passkey-registered':
          settle('credential', true, message);
          return true;
        case 'passkey-challenge':
          settle(`challenge:${message.id}`, true, message);
          return true;
        case 'passkey-refused':
          if (message.id) settle(`challenge:${message.id}`, false, message.message || message.reason);
          else for (const key of ['register', 'credential']) settle(key, false, message.message || message.reason);
          return true;
        default:
          return false;
      }
    },
    card,
  };
}
