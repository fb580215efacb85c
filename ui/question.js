// askdesk UI: one ordinary question (single or multi select, free-text "Other", skip) and its answer.
import { h, displayLabel } from './dom.js';
import { imageStrip, answerPictures } from './images.js';
import { t } from './l10n.js';

/**
 * Renders a question card of `request`, restored from `draft` (what draft() returned for it before,
 * its pictures by the numbers the backend keeps them under) when there is one; `onChange` is called
 * whenever the human changes the answer. Returns a controller:
 *   node, id, answer() -> AnswerItem | null (null: not answered yet), draft(), pick(n) for digit
 *   keys, focus(), focusStart(), markMissing().
 */
export function plainQuestion(q, index, { request, draft = null, onChange = () => {} } = {}) {
  const name = `q${index}`;
  const multi = q.multiSelect;
  const type = multi ? 'checkbox' : 'radio';
  const hasOptions = q.options.length > 0;
  let skipped = false;

  const inputs = q.options.map((o) => h('input', { type, name, value: o.label, class: 'option-input' }));
  const otherText = h('textarea', {
    class: 'other-input',
    rows: 2,
    placeholder: t(!hasOptions ? 'other-placeholder-free' : multi ? 'other-placeholder-multi' : 'other-placeholder-single'),
    'aria-label': t(hasOptions ? 'other-aria' : 'answer-aria', { question: q.question }),
  });
  const otherInput = hasOptions ? h('input', { type, name, value: '', class: 'option-input other-choice' }) : null;
  // A picture pasted or dropped into the box goes with the Other answer, as typed text does.
  const pictures = answerPictures(otherText, {
    request,
    kept: draft && draft.pictures,
    onChange: () => {
      if (otherInput && pictures.count() && !otherInput.checked) otherInput.checked = true;
      card.classList.remove('missing');
      syncSkipStop();
      onChange();
    },
  });

  const optionRows = q.options.map((o, i) =>
    h('label', { class: `option${o.recommended ? ' recommended' : ''}` },
      inputs[i],
      h('span', { class: 'option-key', 'aria-hidden': 'true' }, i < 9 ? String(i + 1) : ''),
      h('span', { class: 'option-body' },
        h('span', { class: 'option-title' },
          h('span', { class: 'option-label', dir: 'auto' }, displayLabel(o.label)),
          o.recommended ? h('span', { class: 'pill accent' }, t('recommended')) : null),
        o.description ? h('span', { class: 'option-desc', dir: 'auto' }, o.description) : null,
        imageStrip(o.images, t('option-image', { option: displayLabel(o.label) })))));

  const otherRow = hasOptions
    ? h('label', { class: 'option other' },
        otherInput,
        h('span', { class: 'option-key', 'aria-hidden': 'true' }, q.options.length < 9 ? String(q.options.length + 1) : ''),
        h('span', { class: 'option-body' },
          h('span', { class: 'option-title' }, h('span', { class: 'option-label' }, t('other'))),
          otherText, pictures.node))
    : h('div', { class: 'free-text' }, otherText, pictures.node);

  // Typing in "Other" chooses it; choosing "Other" puts the cursor in its box.
  otherText.addEventListener('input', () => {
    if (otherInput && otherText.value.trim() && !otherInput.checked) otherInput.checked = true;
    card.classList.remove('missing');
  });
  if (otherInput) otherInput.addEventListener('change', () => { if (otherInput.checked) otherText.focus(); });
  for (const input of inputs) input.addEventListener('change', () => card.classList.remove('missing'));

  const skipButton = h('button', { type: 'button', class: 'link skip' }, t('skip'));
  const skippedNote = h('span', { class: 'skipped-note' }, t('skipped-note'));
  const keptNote = h('span', { class: 'kept-note', role: 'status', hidden: true }, t('kept-note'));
  // No key throws typed text away: a Tab out of the box does not land on Skip, and Space or Enter
  // on Skip (a click of detail 0) does not skip a question with text typed; a click does.
  const typed = () => otherText.value.trim() !== '' || pictures.count() > 0;
  skipButton.addEventListener('click', (e) => {
    if (!skipped && e.detail === 0 && typed()) {
      keptNote.hidden = false;
      return;
    }
    setSkipped(!skipped);
  });
  const syncSkipStop = () => {
    if (!skipped && typed()) skipButton.setAttribute('tabindex', '-1');
    else { skipButton.removeAttribute('tabindex'); keptNote.hidden = true; }
  };
  otherText.addEventListener('input', syncSkipStop);

  // Focusable, so a click anywhere on the card makes it the question digits act on.
  const card = h('fieldset', { class: 'question card', tabindex: '-1', dataset: { qid: q.id } },
    q.header ? h('div', { class: 'q-header', dir: 'auto' }, q.header) : null,
    h('legend', { class: 'q-text', dir: 'auto' }, q.question),
    q.detailHtml ? detail(q.detailHtml) : null,
    imageStrip(q.images),
    hasOptions ? h('div', { class: 'options', role: multi ? 'group' : 'radiogroup' }, optionRows, otherRow) : otherRow,
    h('div', { class: 'q-foot' },
      multi ? h('span', { class: 'q-kind' }, t('choose-any')) : hasOptions ? h('span', { class: 'q-kind' }, t('choose-one')) : null,
      skippedNote, keptNote, skipButton));

  function setSkipped(on) {
    skipped = on;
    card.classList.toggle('skipped', on);
    card.classList.remove('missing');
    for (const input of [...inputs, otherInput, otherText]) if (input) input.disabled = on;
    skipButton.textContent = t(on ? 'undo-skip' : 'skip');
    syncSkipStop();
    onChange();
  }

  if (draft) {
    const checked = new Set(draft.checked || []);
    inputs.forEach((input) => { input.checked = checked.has(input.value); });
    if (otherInput) otherInput.checked = Boolean(draft.other);
    otherText.value = typeof draft.text === 'string' ? draft.text : '';
    if (draft.skipped) setSkipped(true);
    syncSkipStop();
  }
  card.addEventListener('input', onChange);
  card.addEventListener('change', onChange);

  return {
    id: q.id,
    node: card,
    /** What is chosen and typed so far, for a page built later to restore (JSON). */
    draft() {
      return {
        id: q.id,
        checked: inputs.filter((input) => input.checked).map((input) => input.value),
        other: Boolean(otherInput && otherInput.checked),
        text: otherText.value,
        pictures: pictures.kept(),
        skipped,
      };
    },
    answer() {
      if (skipped) return { id: q.id, selected: [] };
      const text = otherText.value.trim();
      // The pictures go with the Other answer (protocol 1.4), beside its text or alone.
      const images = pictures.images();
      const withOther = (item) => {
        if (text) item.custom = text;
        if (images.length) item.images = images;
        return item;
      };
      if (!hasOptions) return text || images.length ? withOther({ id: q.id, selected: [] }) : null;
      const chosen = q.options.filter((_, i) => inputs[i].checked).map((o) => o.label);
      const other = otherInput.checked && (text || images.length);
      if (!multi) {
        // protocol 1: for a single-select question, custom overrides the choice and selected is empty.
        if (otherInput.checked) return other ? withOther({ id: q.id, selected: [] }) : null;
        return chosen.length ? { id: q.id, selected: chosen } : null;
      }
      if (!chosen.length && !other) return null;
      return other ? withOther({ id: q.id, selected: chosen }) : { id: q.id, selected: chosen };
    },
    pick(n) {
      if (skipped || !hasOptions) return false;
      const all = [...inputs, otherInput];
      const input = all[n - 1];
      if (!input) return false;
      input.checked = multi ? !input.checked : true;
      // Bubbling, as a click's change does: the card's listener keeps the draft and the queue's progress.
      input.dispatchEvent(new Event('change', { bubbles: true }));
      if (input === otherInput && input.checked) otherText.focus(); else input.focus();
      return true;
    },
    focus() {
      const target = inputs.find((i) => i.checked) || inputs[0] || otherText;
      target.focus();
    },
    /** Where the focus starts when the request comes into view: the first option, or the text box. */
    focusStart() { (inputs.find((i) => i.checked) || inputs[0] || otherText).focus({ preventScroll: true }); },
    markMissing() {
      card.classList.add('missing');
      // At once, not smoothly: the toast that points at the card places itself by where it is.
      card.scrollIntoView({ block: 'nearest' });
    },
  };
}

/** The sanitized markdown the backend rendered: the only HTML this page inserts. */
export function detail(html) {
  const el = h('div', { class: 'md detail' });
  el.innerHTML = html;
  return el;
}
